import 'server-only';
import { ReplyError, type Redis } from 'ioredis';
import { NodeConnection, type NodeAddress } from '@redlock-console/redlock/internals';
import type { LiveEvent } from '../../api/events';
import { ensureNotifications, ensureReady } from '../../inspect';
import { lockKeyPrefix } from '@redlock-console/redlock';
import { EventGrouping } from './event-grouping';
import { nodeNumber } from '../../node-number';

const EVENT_TYPES: Record<string, Extract<LiveEvent['type'], `lock.${string}`>> = {
  set: 'lock.granted',
  // PEXPIRE notifies `expire` too (Redis has no `pexpire` event).
  expire: 'lock.extended',
  del: 'lock.released',
  expired: 'lock.expired',
};

/**
 * What one node's keyevents mean for its lock keys. The lock core writes a lock key with `SET` only
 * to grant it (`SET … NX PX`, which Redis reports as `set` then `expire`; a multi-resource grant
 * sets each key in turn). Its rewrites of a held lock's value (the fence round records the fence,
 * an extend counts itself) are `SETRANGE` (extend.lua says why), which these channels do not
 * carry. So a `set` is a grant, the `expire` right behind it is the grant's own PX, and any other
 * `expire` is an extension (`PEXPIRE … GT`; one that lengthens nothing is not notified). Nothing
 * else is remembered: a lock held before the events began is extended at its next extension, a
 * key that vanished without a `del` (evicted, flushed, a node restarted empty) is granted at its
 * next grant, and a lost connection forgets nothing that matters.
 *
 * (The lock core rewrote with `SET … KEEPTTL` before November 2026: a lock taken by such a core
 * would be reported granted again at each rewrite, and an extension right after such a rewrite
 * taken for that grant's PX. Upgrade every client of the masters with the console.)
 */
export class NodeKeyEvents {
  /** The key of the grant reported by the node's previous event (its PX `expire` comes next). */
  private lastGrant: string | null = null;

  /** The event type of `event` on `key`, or null when it reports nothing (a grant's own PX, another event). */
  classify(event: string, key: string): Extract<LiveEvent['type'], `lock.${string}`> | null {
    const lastGrant = this.lastGrant;
    this.lastGrant = null;
    const type = EVENT_TYPES[event];
    if (!type) return null;
    if (event === 'set') this.lastGrant = key;
    else if (event === 'expire' && lastGrant === key) return null;
    return type;
  }

  /** A new connection to the node: the event after the next `set` is not known to be its PX. */
  reset(): void {
    this.lastGrant = null;
  }
}

export interface KeyspaceSourceOptions {
  clients: Redis[];
  keyPrefix: string;
  /** Enable notifications with CONFIG SET (only on nodes the console manages). */
  manageConfig: boolean;
  /** Events of one kind on one resource within this window are one event listing their nodes. */
  groupMs?: number;
  emit(event: LiveEvent): void;
  /** Called with the nodes on which notifications could not be enabled or subscribed to (they need polling), and why. */
  onUnsupported(nodes: number[], reasons: Record<number, string>): void;
  /** Called once every node's subscription is in place (or given up on: polled instead). */
  onReady?(): void;
  /**
   * A node reported unsupported for a passing reason (no answer in time: a busy or restarting
   * node, not a refusal) is tried again every `retryMs` (default 5 s); called when its
   * subscription is then in place, so it need no longer be polled.
   */
  onSubscribed?(node: number): void;
  /** How long a node's first subscription may take before it is polled instead (default FIRST_SUBSCRIBE_MS). */
  firstSubscribeMs?: number;
  retryMs?: number;
}

/** Why a node's subscription did not come up: its own refusal (final), or no answer in time (tried again). */
class SubscribeFailure extends Error {
  constructor(
    message: string,
    readonly final: boolean,
  ) {
    super(message);
  }
}

/**
 * Lock changes from keyspace notifications (`__keyevent@<db>__:set|del|expired|expire`) on every
 * node, grouped per resource so a grant on five nodes is one event (see NodeKeyEvents for what each
 * keyevent means). Returns a stop function.
 */
export function startKeyspaceSource(options: KeyspaceSourceOptions): () => void {
  const lockPrefix = lockKeyPrefix(options.keyPrefix);
  const grouping = new EventGrouping(options.emit, options.groupMs ?? 40);
  const subscribers: NodeConnection[] = [];
  let stopped = false;

  // A subscriber's unsolicited replies: its messages, and the confirmations of its SUBSCRIBE past the first.
  const onPush = (node: number, keyEvents: NodeKeyEvents, events: ReadonlyMap<string, string>) => (reply: unknown) => {
    if (!Array.isArray(reply) || reply[0] !== 'message') return;
    const key = reply[2] as string;
    if (!key.startsWith(lockPrefix)) return;
    const event = events.get(reply[1] as string);
    if (event === undefined) return;
    const type = keyEvents.classify(event, key);
    if (!type) return;
    grouping.add(node, type, key.slice(lockPrefix.length));
  };

  const firstSubscribeMs = options.firstSubscribeMs ?? FIRST_SUBSCRIBE_MS;
  const retryMs = options.retryMs ?? 5_000;
  const retryTimers = new Set<NodeJS.Timeout>();

  /** Subscribe node `node`'s keyevents; throws SubscribeFailure (final: refused; else: no answer in time). */
  const subscribeNode = async (client: Redis, node: number): Promise<void> => {
    try {
      // A client still connecting (the console just started) refuses commands (no offline
      // queue): wait for it as long as a first subscription may take.
      await ensureReady(client, firstSubscribeMs);
      if (!(await within(ensureNotifications(client, options.manageConfig), firstSubscribeMs, 'reading notify-keyspace-events'))) {
        throw new SubscribeFailure('the node does not publish keyevents of every class the events read (notify-keyspace-events)', true);
      }
    } catch (err) {
      if (err instanceof SubscribeFailure) throw err;
      // The node's own error reply (NOPERM for CONFIG, …) is its answer; anything else (a
      // timeout, a connection not up yet) is a busy or restarting node, tried again.
      const refused = err instanceof ReplyError;
      throw new SubscribeFailure(err instanceof Error ? err.message : String(err), refused);
    }
    if (stopped) return;
    // The lock core's own connection, not an ioredis duplicate: its parser hands over each
    // message as three strings, where ioredis's subscriber path made buffers, copied them to
    // strings and went through its command bookkeeping — a quarter of what reading the
    // notifications cost the console under load.
    const sub = new NodeConnection(addressOf(client));
    sub.on('error', () => undefined);
    const keyEvents = new NodeKeyEvents();
    // The exact channels of the lock keys' database: a master matches a channel with one
    // hash lookup, but tries every pattern on every notification it publishes (at a few
    // notifications per node per lock operation, the patterns cost the masters real CPU).
    const db = client.options.db ?? 0;
    const events = new Map(Object.keys(EVENT_TYPES).map((event) => [`__keyevent@${db}__:${event}`, event]));
    sub.on('push', onPush(node, keyEvents, events));
    try {
      await subscribeOnEveryConnection(sub, [...events.keys()], () => keyEvents.reset(), firstSubscribeMs);
    } catch (err) {
      // Not subscribed: this node is polled instead (and tried again unless it refused).
      sub.disconnect();
      throw err;
    }
    if (stopped) sub.disconnect();
    else subscribers.push(sub);
  };

  /** Try a node that did not answer in time again, until it subscribes or the sources stop. */
  const retryLater = (client: Redis, node: number) => {
    const timer = setTimeout(() => {
      retryTimers.delete(timer);
      if (stopped) return;
      subscribeNode(client, node).then(
        () => {
          if (!stopped) options.onSubscribed?.(node);
        },
        (err: unknown) => {
          if (!(err instanceof SubscribeFailure && err.final)) retryLater(client, node);
        },
      );
    }, retryMs);
    timer.unref();
    retryTimers.add(timer);
  };

  void (async () => {
    const unsupported: number[] = [];
    const reasons: Record<number, string> = {};
    await Promise.all(
      options.clients.map(async (client, i) => {
        const node = nodeNumber(i);
        try {
          await subscribeNode(client, node);
        } catch (err) {
          unsupported.push(node);
          reasons[node] = err instanceof Error ? err.message : String(err);
          if (!(err instanceof SubscribeFailure && err.final)) retryLater(client, node);
        }
      }),
    );
    if (unsupported.length && !stopped)
      options.onUnsupported(
        unsupported.sort((a, b) => a - b),
        reasons,
      );
    options.onReady?.();
  })();

  return () => {
    stopped = true;
    for (const timer of retryTimers) clearTimeout(timer);
    grouping.stop();
    for (const sub of subscribers) sub.disconnect();
  };
}

/** Where an ioredis client of the console's connects (the runtime makes them from the node URLs: no other TLS options). */
function addressOf(client: Redis): NodeAddress {
  const o = client.options;
  return {
    host: o.host ?? '127.0.0.1',
    port: o.port ?? 6379,
    tls: Boolean(o.tls),
    username: o.username || null,
    password: o.password || null,
    db: o.db ?? 0,
  };
}

/** `promise`, or a rejection naming `what` when it has not settled within `ms` (a node that holds its replies). */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer ${what} within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** How long the first subscription to a node may take before the node is polled instead. */
export const FIRST_SUBSCRIBE_MS = 3_000;

/**
 * SUBSCRIBE on each (re)connection of `sub` (a new connection has no subscription: `fresh` is
 * called first, as events may have been missed). Resolves at the first subscription in place (one
 * SUBSCRIBE subscribes to every channel at once); rejects when that first SUBSCRIBE is refused by
 * the node (an ACL user without channel permissions, Redis 7's default for new users: NOPERM),
 * when it is not in place within FIRST_SUBSCRIBE_MS (the node stopped accepting connections; a
 * connection lost meanwhile is retried until then), or when the connection is closed for good. A
 * SUBSCRIBE refused on a later reconnection leaves the node without events until the next one (its
 * permissions changed at run time).
 */
function subscribeOnEveryConnection(sub: NodeConnection, channels: string[], fresh: () => void, withinMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const settle = (err?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) reject(err);
      else resolve();
    };
    const timer = setTimeout(() => settle(new SubscribeFailure(`not subscribed within ${withinMs} ms`, false)), withinMs);
    const subscribe = () => {
      fresh();
      sub.call('SUBSCRIBE', ...channels).then(
        () => settle(),
        // A reply error is the node's refusal; a connection lost before the reply is retried at the next 'ready'.
        (err: Error) => (sub.status === 'ready' ? settle(new SubscribeFailure(`SUBSCRIBE refused: ${err.message}`, true)) : undefined),
      );
    };
    sub.on('ready', subscribe);
    if (sub.status === 'ready') subscribe();
    sub.once('end', () => settle(new SubscribeFailure('the subscriber connection was closed', false)));
  });
}
