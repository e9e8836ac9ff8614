import type { Redis } from 'ioredis';

/**
 * Talking to one node within a bound: inspection never waits on a node longer than its timeout,
 * and never queues commands for a node that is not connected (clients are expected to run with
 * `enableOfflineQueue: false`, so a command on a disconnected client fails at once).
 */

/** The message of anything thrown, as one line. */
export function errorMessage(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.split('\n')[0] ?? text;
}

/** Clients seen ready at least once: losing the connection after that means the node is down NOW. */
const wasReady = new WeakSet<Redis>();
const watched = new WeakSet<Redis>();

/** After a lost connection, how long a reconnect in progress may take before the node counts as down. */
export const RECONNECT_GRACE_MS = 250;

function watch(client: Redis): void {
  if (watched.has(client)) return;
  watched.add(client);
  if (client.status === 'ready') wasReady.add(client);
  client.on('ready', () => wasReady.add(client));
}

/**
 * Resolves once `client` is ready. A first connection may take up to `timeoutMs`; a client that
 * was connected before and is now reconnecting gets only RECONNECT_GRACE_MS, so a crashed node
 * reads as down at once instead of after a full timeout per poll. A lazy client that was never
 * connected is connected; a client that was closed on purpose (status `end`) is not reopened.
 */
export function ensureReady(client: Redis, timeoutMs: number, signal?: AbortSignal): Promise<void> {
  watch(client);
  if (client.status === 'ready') return Promise.resolve();
  if (client.status === 'end') return Promise.reject(new Error('the connection is closed'));
  if (client.status === 'wait') client.connect().catch(() => undefined);
  if (wasReady.has(client)) timeoutMs = Math.min(timeoutMs, RECONNECT_GRACE_MS);
  return new Promise<void>((resolve, reject) => {
    const cleanup = () => {
      clearTimeout(timer);
      client.off('ready', onReady);
      client.off('end', onEnd);
      signal?.removeEventListener('abort', onAbort);
    };
    const onReady = () => {
      cleanup();
      resolve();
    };
    const onEnd = () => {
      cleanup();
      reject(new Error('the connection is closed'));
    };
    const onAbort = () => {
      cleanup();
      reject(signal?.reason ?? new Error('aborted'));
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`not connected after ${timeoutMs} ms (${client.status})`));
    }, timeoutMs);
    client.on('ready', onReady);
    client.on('end', onEnd);
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * `promise`, or a rejection after `timeoutMs` ("<what> timed out after N ms"), or the signal's
 * reason once it aborts — whichever comes first. A late reply is dropped.
 */
export function withTimeout<T>(promise: Promise<T>, timeoutMs: number, what: string, signal?: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      fn();
    };
    const onAbort = () => finish(() => reject(signal?.reason ?? new Error('aborted')));
    const timer = setTimeout(() => finish(() => reject(new Error(`${what} timed out after ${timeoutMs} ms`))), timeoutMs);
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => finish(() => resolve(value)),
      (err: unknown) => finish(() => reject(err)),
    );
  });
}

/** Milliseconds elapsed since `start` (a `performance.now()` reading), to 0.01 ms. */
export function elapsedMs(start: number): number {
  return Math.round((performance.now() - start) * 100) / 100;
}
