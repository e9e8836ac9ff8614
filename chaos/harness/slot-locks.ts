/**
 * The history of the slot loops (chaos/workers/slot-loop.ts) folded into one record per grant: a
 * semaphore permit (of one or more slots) or a read or write lock, with its hold interval as the
 * mutex's records have it (chaos/harness/locks.ts), and its slots.
 */
import type { ClientEvent, SlotKind } from './history';
import { indexLocks, type AcquireFailure, type LockRecord } from './locks';
import { slotLockId, slotObject, slotResource } from './slot-names';

/** One granted slot acquire. `resource` is its object (`sem:<name>` or `rw:<name>`). */
export interface SlotGrant extends LockRecord {
  kind: SlotKind;
  /** The semaphore's limit, or the read-write lock's maxReaders, as the client asked. */
  limit: number;
  /** Permits asked for (1 for a read or write lock). */
  permits: number;
  /** The slots the core reported granted. */
  slots: number[];
}

export interface SlotIndex {
  grants: SlotGrant[];
  failures: AcquireFailure[];
}

/** Fold the slot acquires of `events` (those with a `slot-acquire-invoke`) into grants and failures. */
export function indexSlotGrants(events: readonly ClientEvent[]): SlotIndex {
  const invokes = new Map<string, Extract<ClientEvent, { e: 'slot-acquire-invoke' }>>();
  const slotsOf = new Map<string, number[]>();
  const mine: ClientEvent[] = [];
  for (const ev of events) {
    if (ev.e === 'slot-acquire-invoke') {
      invokes.set(ev.lock, ev);
      mine.push({
        e: 'acquire-invoke',
        lock: ev.lock,
        client: ev.client,
        resource: slotObject(ev.kind, ev.name),
        fenced: ev.fenced,
        t: ev.t,
      });
      continue;
    }
    if (ev.e === 'write' || !invokes.has(ev.lock)) continue;
    if (ev.e === 'acquire-ok') slotsOf.set(ev.lock, ev.slots ?? []);
    mine.push(ev);
  }
  const { locks, failures } = indexLocks(mine);
  const grants: SlotGrant[] = [];
  for (const rec of locks.values()) {
    const inv = invokes.get(rec.lock)!;
    grants.push({ ...rec, kind: inv.kind, limit: inv.limit, permits: inv.permits, slots: slotsOf.get(rec.lock) ?? [] });
  }
  return { grants, failures };
}

/** Each grant as one mutex record per slot it holds (`<object>@<slot>`, lock id `<lock>@<slot>`). */
export function perSlotRecords(grants: readonly SlotGrant[]): Map<string, LockRecord> {
  const records = new Map<string, LockRecord>();
  for (const g of grants) {
    for (const slot of g.slots) {
      const lock = slotLockId(g.lock, slot);
      records.set(lock, { ...g, lock, resource: slotResource(g.resource, slot) });
    }
  }
  return records;
}

/** Grants grouped by object, each group sorted by acquire ok. */
export function grantsByObject(grants: readonly SlotGrant[]): Map<string, SlotGrant[]> {
  const byObject = new Map<string, SlotGrant[]>();
  for (const g of grants) {
    let list = byObject.get(g.resource);
    if (!list) byObject.set(g.resource, (list = []));
    list.push(g);
  }
  for (const list of byObject.values()) list.sort((a, b) => a.ok - b.ok);
  return byObject;
}
