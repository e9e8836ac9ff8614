import 'server-only';
import type { Redis } from 'ioredis';
import type { LiveEvent } from '../../api/events';
import { ensureNotifications } from '../../inspect';
import { lockKeyPrefix } from '@redlock-console/redlock';
import { EventGrouping } from './event-grouping';

/**
 * The keyevents the live events subscribe to, and what each means for a lock key. Not `set`: see
 * NodeKeyEvents.
 */
const EVENTS = ['expire', 'del', 'expired'] as const;
type KeyEvent = (typeof EVENTS)[number];

/**
 * What one node's keyevents mean for its lock keys, from three channels: `expire`, `del`, `expired`.
 *
 * Every write of the lock core to a lock key, and the event Redis publishes for it:
 * - a grant, `SET … NX PX` (one resource, or each key in acquire.lua): `set`, then `expire` (a SET
 *   with a TTL reports both);
 * - a fenced grant's second round, `SET … XX KEEPTTL` (fence.lua): `set` alone;
 * - an extend, `PEXPIRE … GT` then `SET … KEEPTTL` (extend.lua): `expire`, then `set` (no `expire`
 *   when GT keeps the longer lease: nothing was extended);
 * - a release, compare-and-`DEL`: `del`; a lease running out: `expired`.
 *
 * A TTL is written exactly by grants and extends, so `expire` alone tells them apart from every
 * value rewrite: an `expire` on a key this node does not hold (as far as its events tell: none
 * since the last `del` or `expired`) is a grant, on a key it holds an extension. The `set`
 * notifications (a grant's, the fence round's, an extend's) say nothing more, and were a quarter of
 * the notifications a fenced lock made every master deliver (and this server read) for the
 * events: issue 18, finding 9. A SET without a TTL is no lock the core writes; it is not an event.
 *
 * What the events cannot tell (before this change as now): a lock already held when the events
 * started, or across a lost connection (`reset`), is reported granted at its first extension.
 */
export class NodeKeyEvents {
  private readonly held = new Set<string>();

  /** The event type of `event` on `key`, or null when it reports nothing. */
  classify(event: string, key: string): Extract<LiveEvent['type'], `lock.${string}`> | null {
    switch (event as KeyEvent) {
      case 'expire':
        if (this.held.has(key)) return 'lock.extended';
        this.held.add(key);
        return 'lock.granted';
      case 'del':
        this.held.delete(key);
        return 'lock.released';
      case 'expired':
        this.held.delete(key);
        return 'lock.expired';
      default:
        return null;
    }
  }

  /** Forget every key: the connection to the node dropped, so events (or the node's data) may be lost. */
  reset(): void {
    this.held.clear();
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
 * Lock changes from keyspace notifications (`__keyevent@<db>__:expire|del|expired`) on every
 * node, grouped per resource so a grant on five nodes is one event (see NodeKeyEvents). Returns a
 * stop function.
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
          const events = new Map(EVENTS.map((event) => [`__keyevent@${db}__:${event}`, event]));
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
