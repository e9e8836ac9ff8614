import type { ClientEvent, Ns, VoteString } from './history';

/** Everything the history says about one granted lock. */
export interface LockRecord {
  lock: string;
  client: number;
  resource: string;
  fenced: boolean;
  invoke: Ns;
  /** Acquire ok, as the client saw it: the start of its hold. */
  ok: Ns;
  /** The validity end computed at the grant. */
  grantValidUntil: Ns;
  /** The validity end after the last successful extend (the grant's when there was none). */
  validUntil: Ns;
  fence: number | null;
  grantVotes: VoteString;
  validityAtReturnMs: number;
  /** When the core decided the grant, if the client recorded it (null: unknown). */
  decided: Ns | null;
  releaseInvoke: Ns | null;
  releaseOk: Ns | null;
  releaseVotes: VoteString | null;
  extends: number;
  /**
   * Extends that succeeded although they were invoked after the validity they were extending had
   * ended (by `lateByNs`: the invoke time minus that validity end). The client logs the invoke
   * before it calls the core, so the core's own clock read later still: it must have refused.
   */
  lateExtends: Array<{ invoke: Ns; lateByNs: Ns }>;
}

/**
 * The hold interval of a lock: [acquire ok, min(release invoke, validity end)]. Empty (end ≤
 * start) for a lock granted with no validity left.
 */
export function holdEnd(lock: LockRecord): Ns {
  return lock.releaseInvoke === null ? lock.validUntil : Math.min(lock.releaseInvoke, lock.validUntil);
}

export interface AcquireFailure {
  lock: string;
  client: number;
  resource: string;
  error: string;
  latencyNs: Ns;
  /** Nodes that answered the acquire yet held one of its keys right after the rejection (empty: none, or not read). */
  leftovers: number[];
  /** The rejection's cleanupPending (null: not logged). */
  pending: number[] | null;
}

export interface LockIndex {
  /** Granted locks by id. */
  locks: Map<string, LockRecord>;
  failures: AcquireFailure[];
}

/** Fold the client events into one record per granted lock (and the failed acquisitions). */
export function indexLocks(events: readonly ClientEvent[]): LockIndex {
  const invokes = new Map<string, Extract<ClientEvent, { e: 'acquire-invoke' }>>();
  const extendInvokes = new Map<string, Ns>();
  const locks = new Map<string, LockRecord>();
  const failures: AcquireFailure[] = [];
  for (const ev of events) {
    switch (ev.e) {
      case 'acquire-invoke':
        invokes.set(ev.lock, ev);
        break;
      case 'acquire-ok': {
        const inv = invokes.get(ev.lock);
        if (!inv) break;
        locks.set(ev.lock, {
          lock: ev.lock,
          client: inv.client,
          resource: inv.resource,
          fenced: inv.fenced,
          invoke: inv.t,
          ok: ev.t,
          grantValidUntil: ev.validUntil,
          validUntil: ev.validUntil,
          fence: ev.fence,
          grantVotes: ev.votes,
          validityAtReturnMs: ev.validityAtReturnMs,
          decided: ev.decided ?? null,
          releaseInvoke: null,
          releaseOk: null,
          releaseVotes: null,
          extends: 0,
          lateExtends: [],
        });
        break;
      }
      case 'acquire-fail': {
        const inv = invokes.get(ev.lock);
        if (inv)
          failures.push({
            lock: ev.lock,
            client: inv.client,
            resource: inv.resource,
            error: ev.error,
            latencyNs: ev.t - inv.t,
            leftovers: ev.leftovers ?? [],
            pending: ev.pending ?? null,
          });
        break;
      }
      case 'extend-invoke':
        extendInvokes.set(ev.lock, ev.t);
        break;
      case 'extend-ok': {
        const rec = locks.get(ev.lock);
        const invoked = extendInvokes.get(ev.lock);
        if (rec && invoked !== undefined && invoked > rec.validUntil)
          rec.lateExtends.push({ invoke: invoked, lateByNs: invoked - rec.validUntil });
        if (rec) {
          // A failed extend leaves the old validity (PEXPIRE GT never shortens); keep the later end.
          rec.validUntil = Math.max(rec.validUntil, ev.validUntil);
          rec.extends++;
        }
        break;
      }
      case 'release-invoke': {
        const rec = locks.get(ev.lock);
        if (rec && rec.releaseInvoke === null) rec.releaseInvoke = ev.t;
        break;
      }
      case 'release-ok': {
        const rec = locks.get(ev.lock);
        if (rec) {
          rec.releaseOk = ev.t;
          rec.releaseVotes = ev.votes;
        }
        break;
      }
      default:
        break;
    }
  }
  return { locks, failures };
}

/** Granted locks grouped by resource, each group sorted by acquire ok (grant order when exclusive). */
export function locksByResource(locks: Iterable<LockRecord>): Map<string, LockRecord[]> {
  const byResource = new Map<string, LockRecord[]>();
  for (const rec of locks) {
    let list = byResource.get(rec.resource);
    if (!list) byResource.set(rec.resource, (list = []));
    list.push(rec);
  }
  for (const list of byResource.values()) list.sort((a, b) => a.ok - b.ok);
  return byResource;
}
