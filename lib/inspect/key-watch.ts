import type { Redis } from 'ioredis';
import { withTimeout } from './connection';
import { ensureNotifications } from './notifications';

/**
 * Which lock keys changed on one node, from its keyspace notifications (`__keyevent@<db>__:*`).
 * The live index (lock-index.ts) keeps a copy of every node's lock keys and re-reads only the keys
 * named here. The rules that keep that copy true:
 *
 * - Every event on a lock key marks it dirty, with a sequence number; nothing is inferred from the
 *   event's kind (a `del` and a later `set` both just mean "read it again").
 * - A node's events come in the order the node ran the commands, on one connection. A PING on that
 *   connection (`barrier()`) answers after every event published before the node ran it: once the
 *   barrier resolves, every change made before it is in `dirty`.
 * - A re-read clears a key's mark only if no event arrived for it since the read was sent
 *   (`settle`); an event that crosses the read keeps it dirty for the next one.
 * - Events are lost when the subscription drops (a restart also loses the data): `generation`
 *   moves on every lost connection and on an overflow of `dirty`, and `intact` goes false until
 *   the index has scanned the node again, from a barrier taken after the subscription was back.
 */
/** subscribe(): listening; the node does not publish keyevents (and is not ours to configure); or it could not be set up. */
export type SubscribeOutcome = 'subscribed' | 'no-notifications' | 'failed';

export class NodeKeyWatch {
  /** Lock key → sequence number of its latest event. */
  readonly dirty = new Map<string, number>();
  /** Sequence number of the latest event. */
  seq = 0;
  /** Moves whenever events may have been lost: a scan started under an older one proves nothing. */
  generation = 0;
  /** The index's copy of this node is complete up to `dirty` (set by the index after a full scan). */
  intact = false;
  /** The node's fingerprint when the index last scanned it (see fingerprint.ts). */
  fingerprint: string | null = null;
  private sub: Redis | null = null;
  private subscribed: Promise<SubscribeOutcome> | null = null;
  private stopped = false;

  constructor(
    private readonly client: Redis,
    private readonly lockPrefix: string,
    /** More dirty keys than this between two refreshes: forget them and rescan the node instead. */
    private readonly maxDirty: number,
  ) {}

  /**
   * Subscribe to the node's keyevents (once; later calls share the first success). The index
   * scans a node in full, every time, while this is not 'subscribed'.
   */
  subscribe(manageConfig: boolean, timeoutMs: number): Promise<SubscribeOutcome> {
    if (this.stopped) return Promise.resolve('failed');
    this.subscribed ??= this.connect(manageConfig, timeoutMs).then((outcome) => {
      if (outcome !== 'subscribed') this.subscribed = null; // try again on the next refresh
      return outcome;
    });
    return this.subscribed;
  }

  private async connect(manageConfig: boolean, timeoutMs: number): Promise<SubscribeOutcome> {
    try {
      // Bounded: a node that stops answering here must not hold up the snapshot waiting on it.
      if (!(await withTimeout(ensureNotifications(this.client, manageConfig), timeoutMs, 'reading the notification settings')))
        return 'no-notifications';
    } catch {
      return 'failed';
    }
    if (this.stopped) return 'failed';
    const db = this.client.options.db ?? 0;
    // Commands wait out a reconnect (bounded by the callers' timeouts) instead of failing with it:
    // a barrier queued meanwhile is answered once the subscription is back.
    const sub = this.client.duplicate({
      enableOfflineQueue: true,
      lazyConnect: false,
      connectTimeout: timeoutMs,
      commandTimeout: undefined,
      maxRetriesPerRequest: null,
    });
    sub.on('error', () => undefined);
    sub.on('close', () => this.lose());
    // Reconnecting gave up: subscribe again (a new connection) on the next refresh.
    sub.on('end', () => {
      if (this.sub !== sub) return;
      this.sub = null;
      this.subscribed = null;
    });
    sub.on('pmessage', (_pattern: string, _channel: string, key: string) => this.onEvent(key));
    this.sub = sub;
    try {
      await withTimeout(sub.psubscribe(`__keyevent@${db}__:*`), timeoutMs, 'subscribing to keyspace notifications');
      if (this.stopped) throw new Error('stopped');
      return 'subscribed';
    } catch {
      if (this.sub === sub) this.sub = null;
      sub.disconnect();
      return 'failed';
    }
  }

  private onEvent(key: string): void {
    if (!key.startsWith(this.lockPrefix)) return;
    if (this.dirty.size >= this.maxDirty && !this.dirty.has(key)) {
      this.lose();
      return;
    }
    this.dirty.set(key, ++this.seq);
  }

  /** Events may have been lost: the copy of this node is no longer known to be complete. */
  lose(): void {
    this.generation++;
    this.intact = false;
    this.dirty.clear();
  }

  /**
   * Resolves once every event the node published before now has been counted (a PING behind
   * them on the subscriber connection). Rejects after `timeoutMs` or without a subscription.
   */
  async barrier(timeoutMs: number): Promise<void> {
    if (!this.sub) throw new Error('not subscribed to keyspace notifications');
    await withTimeout(this.sub.ping(), timeoutMs, 'the notification connection');
  }

  /** The re-read of `key`, sent when the sequence was at `sentAtSeq`, has been applied. */
  settle(key: string, sentAtSeq: number): void {
    const seq = this.dirty.get(key);
    if (seq !== undefined && seq <= sentAtSeq) this.dirty.delete(key);
  }

  stop(): void {
    this.stopped = true;
    this.sub?.disconnect();
    this.sub = null;
    this.subscribed = null;
    this.lose();
  }
}
