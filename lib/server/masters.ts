import 'server-only';
import type { Redis } from 'ioredis';
import { ensureReady } from '../inspect';
import { getRuntime } from './runtime';
import { quorumSize } from '@redlock-console/redlock';

/**
 * The console's own state on the masters (audit, sessions, login throttling): written to every
 * master, read back from a majority. A majority that answers always meets a majority that was
 * written, so what a console process wrote is seen by every other one, and by itself after a
 * restart, while any minority of masters is lost or unreachable.
 */

const CONNECT_TIMEOUT_MS = 1_000;

/** `fn` on every master at once, each after its connection is ready (bounded); settled results in node order. */
export function onEveryMaster<T>(fn: (client: Redis, node: number) => Promise<T>): Promise<PromiseSettledResult<T>[]> {
  return Promise.allSettled(
    getRuntime().clients.map(async (c, i) => {
      await ensureReady(c, CONNECT_TIMEOUT_MS);
      return fn(c, i);
    }),
  );
}

/** Written on how many masters, out of how many. */
export interface WriteResult {
  written: number;
  failed: number;
  majority: boolean;
}

export async function writeEveryMaster(fn: (client: Redis, node: number) => Promise<unknown>): Promise<WriteResult> {
  const results = await onEveryMaster(fn);
  const written = results.filter((r) => r.status === 'fulfilled').length;
  return { written, failed: results.length - written, majority: written >= quorumSize(results.length) };
}

/**
 * Ask every master, and answer as soon as a majority has replied (a slow or paused node does not
 * slow every request down), or as soon as one reply is `decisive` (e.g. "revoked": no need to wait
 * for more), or once every master has replied or failed. `answers` holds the replies seen by then.
 */
export function readMajority<T>(
  fn: (client: Redis, node: number) => Promise<T>,
  decisive: (answer: T) => boolean = () => false,
): Promise<{ answers: T[]; failed: number; configured: number }> {
  const clients = getRuntime().clients;
  const needed = quorumSize(clients.length);
  return new Promise((resolve) => {
    const answers: T[] = [];
    let failed = 0;
    let done = false;
    const settle = () => {
      if (done) return;
      if (answers.length >= needed || failed + answers.length === clients.length || answers.some(decisive)) {
        done = true;
        resolve({ answers: [...answers], failed, configured: clients.length });
      }
    };
    if (clients.length === 0) settle();
    clients.forEach((c, i) => {
      ensureReady(c, CONNECT_TIMEOUT_MS)
        .then(() => fn(c, i))
        .then(
          (answer) => {
            answers.push(answer);
            settle();
          },
          () => {
            failed++;
            settle();
          },
        );
    });
  });
}
