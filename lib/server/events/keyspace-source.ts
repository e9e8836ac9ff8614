import 'server-only';
import type { Redis } from 'ioredis';
import { NodeConnection, type NodeAddress } from '@redlock-console/redlock/internals';
import type { LiveEvent } from '../../api/events';
import { ensureNotifications, ensureReady } from '../../inspect';
import { lockKeyPrefix } from '@redlock-console/redlock';
import { EventGrouping } from './event-grouping';

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

  void (async () => {
    const unsupported: number[] = [];
    const reasons: Record<number, string> = {};
    await Promise.all(
      options.clients.map(async (client, i) => {
        const node = i + 1;
        try {
          // A client still connecting (the console just started) refuses commands (no offline
          // queue): wait for it as long as a first subscription may take, or the node would be
          // polled for as long as these sources run.
          await ensureReady(client, FIRST_SUBSCRIBE_MS);
          if (!(await ensureNotifications(client, options.manageConfig))) {
            unsupported.push(node);
            reasons[node] = 'the node does not publish keyevents of every class the events read (notify-keyspace-events)';
            return;
          }
          if (stopped) return;
          // The lock core's own connection, not an ioredis duplicate: its parser hands over each
          // message as three strings, where ioredis's subscriber path made buffers, copied them to
          // strings and went through its command bookkeeping — a quarter of what reading the
          // notifications cost the console under load.
          const sub = new NodeConnection(addressOf(client));
          sub.on('error', () => undefined);
          subscribers.push(sub);
          const keyEvents = new NodeKeyEvents();
          // The exact channels of the lock keys' database: a master matches a channel with one
          // hash lookup, but tries every pattern on every notification it publishes (at a few
          // notifications per node per lock operation, the patterns cost the masters real CPU).
          const db = client.options.db ?? 0;
          const events = new Map(Object.keys(EVENT_TYPES).map((event) => [`__keyevent@${db}__:${event}`, event]));
          sub.on('push', onPush(node, keyEvents, events));
          try {
            await subscribeOnEveryConnection(sub, [...events.keys()], () => keyEvents.reset());
          } catch (err) {
            // Not subscribed (refused, or not connected in time): this node is polled instead.
            sub.disconnect();
            throw err;
          }
        } catch (err) {
          unsupported.push(node);
          reasons[node] = err instanceof Error ? err.message : String(err);
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
function subscribeOnEveryConnection(sub: NodeConnection, channels: string[], fresh: () => void): Promise<void> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const settle = (err?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) reject(err);
      else resolve();
    };
    const timer = setTimeout(() => settle(new Error(`not subscribed within ${FIRST_SUBSCRIBE_MS} ms`)), FIRST_SUBSCRIBE_MS);
    const subscribe = () => {
      fresh();
      sub.call('SUBSCRIBE', ...channels).then(
        () => settle(),
        // A reply error is the node's refusal; a connection lost before the reply is retried at the next 'ready'.
        (err: Error) => (sub.status === 'ready' ? settle(new Error(`SUBSCRIBE refused: ${err.message}`)) : undefined),
      );
    };
    sub.on('ready', subscribe);
    if (sub.status === 'ready') subscribe();
    sub.once('end', () => settle(new Error('the subscriber connection was closed')));
  });
}
