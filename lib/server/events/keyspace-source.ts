import 'server-only';
import type { Redis } from 'ioredis';
import type { LiveEvent } from '../../api/events';
import { ensureNotifications } from '../../inspect';
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
 * What one node's keyevents mean for its lock keys. A lock key's value is `<token> <metadata>`
 * (packages/redlock/src/value.ts), and the lock core rewrites it while the lock is held: an extend
 * runs `PEXPIRE … GT` and then writes the new extension count (`SET … KEEPTTL`: extend.lua), a
 * fenced grant's second round writes the fence (`SET … XX KEEPTTL`: fence.lua). A grant is a SET on
 * a key that is not there (`SET … NX PX`, which Redis reports as `set` then `expire`). So a `set`
 * is a grant only on a key this node does not hold as far as its events tell (any `set` or
 * `expire` since the last `del` or `expired`), and the `expire` right behind a grant's `set` is the
 * grant's own PX, not an extension. An extend's `expire` comes before its `set`, so a lock held
 * before the events started (or across a lost connection) is reported extended at its next
 * extension, and the rewrite after it is nothing.
 *
 * Why `set` cannot be left out (it is half of what a fenced lock makes a master deliver: the
 * grant's `set` and `expire` in one write, the fence round's `set` in another, the `del`): with
 * `expire` alone, a grant and the extension of a lock this node's events never showed look the
 * same, and the live events would report a grant for every lock already held when a screen opens.
 */
export class NodeKeyEvents {
  private readonly held = new Set<string>();
  /** The key of the grant reported by the node's previous event (its PX `expire` comes next). */
  private lastGrant: string | null = null;

  /** The event type of `event` on `key`, or null when it reports nothing (a rewrite, a grant's own PX). */
  classify(event: string, key: string): Extract<LiveEvent['type'], `lock.${string}`> | null {
    const lastGrant = this.lastGrant;
    this.lastGrant = null;
    const type = EVENT_TYPES[event];
    if (!type) return null;
    switch (event) {
      case 'set':
        if (this.held.has(key)) return null;
        this.held.add(key);
        this.lastGrant = key;
        return type;
      case 'expire':
        this.held.add(key);
        return lastGrant === key ? null : type;
      default:
        this.held.delete(key);
        return type;
    }
  }

  /** Forget every key: the connection to the node dropped, so events (or the node's data) may be lost. */
  reset(): void {
    this.held.clear();
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
  /** Called with the nodes on which notifications could not be enabled (they need polling). */
  onUnsupported(nodes: number[]): void;
  /** Called once every node's subscription is in place (or given up on: polled instead). */
  onReady?(): void;
}

/**
 * Lock changes from keyspace notifications (`__keyevent@<db>__:set|del|expired|expire`) on every
 * node, grouped per resource so a grant on five nodes is one event; rewrites of a held key's value
 * are not grants (see NodeKeyEvents). Returns a stop function.
 */
export function startKeyspaceSource(options: KeyspaceSourceOptions): () => void {
  const lockPrefix = lockKeyPrefix(options.keyPrefix);
  const grouping = new EventGrouping(options.emit, options.groupMs ?? 40);
  const subscribers: Redis[] = [];
  let stopped = false;

  const onMessage = (node: number, keyEvents: NodeKeyEvents, events: ReadonlyMap<string, string>) => (channel: string, key: string) => {
    if (!key.startsWith(lockPrefix)) return;
    const event = events.get(channel);
    if (event === undefined) return;
    const type = keyEvents.classify(event, key);
    if (!type) return;
    grouping.add(node, type, key.slice(lockPrefix.length));
  };

  void (async () => {
    const unsupported: number[] = [];
    await Promise.all(
      options.clients.map(async (client, i) => {
        const node = i + 1;
        try {
          if (!(await ensureNotifications(client, options.manageConfig))) {
            unsupported.push(node);
            return;
          }
          const sub = client.duplicate({ enableOfflineQueue: true, lazyConnect: false });
          sub.on('error', () => undefined);
          if (stopped) {
            sub.disconnect();
            return;
          }
          subscribers.push(sub);
          const keyEvents = new NodeKeyEvents();
          // Events missed while disconnected (or a restart that lost the node's data) leave the
          // held keys unknown: start over rather than take a new grant for a rewrite.
          sub.on('close', () => keyEvents.reset());
          // The exact channels of the lock keys' database: a master matches a channel with one
          // hash lookup, but tries every pattern on every notification it publishes (at a few
          // notifications per node per lock operation, the patterns cost the masters real CPU).
          const db = client.options.db ?? 0;
          const events = new Map(Object.keys(EVENT_TYPES).map((event) => [`__keyevent@${db}__:${event}`, event]));
          sub.on('message', onMessage(node, keyEvents, events));
          await sub.subscribe(...events.keys());
        } catch {
          unsupported.push(node);
        }
      }),
    );
    if (unsupported.length && !stopped) options.onUnsupported(unsupported.sort((a, b) => a - b));
    options.onReady?.();
  })();

  return () => {
    stopped = true;
    grouping.stop();
    for (const sub of subscribers) sub.disconnect();
  };
}
