import 'server-only';
import { rwSlotName, semaphoreSlotName } from '@redlock-console/redlock';
import type { LockHistoryEntry, LockHold } from '../api/lock-history';
import type { SlotHistoryResponse, SlotHold } from '../api/slot-history';
import type { SlotKind, SlotLockDetailResponse } from '../api/slot-locks';
import { holdsOf, readLockHistory, tokenFingerprint } from './lock-history';
import type { CurrentHold } from './lock-history/reader';
import { getSlotLock } from './slot-inspect-service';

/** Holds read per slot before the merge: a slot's whole history (the reader keeps 32 entries per principal). */
const PER_SLOT = 32;

/**
 * How the lock service's grant of each kind begins its `detail` (lock-service/slot-operations.ts,
 * recordGrant). A slot's history is kept under its slot name, `sem:<r>:<i>` or `rw:<r>:<i>`, which
 * is also a well-formed mutex name: a mutex called `sem:batch:0` writes its grants to the same
 * stream, and the reader shows its key (`lock:sem:batch:0`) as held. Neither is this slot's.
 */
const SLOT_GRANT: Record<SlotKind, readonly string[]> = {
  semaphore: ['semaphore permit:'],
  rwlock: ['read lock:', 'write lock:'],
};

const slotName = (kind: SlotKind, resource: string, slot: number) =>
  kind === 'semaphore' ? semaphoreSlotName(resource, slot) : rwSlotName(resource, slot);

/**
 * The history of `slots` of one semaphore or read-write lock, newest first: each slot's lock
 * history (read from every master, as a lock's), merged. A hold is one row for the slots it held
 * with the same ending (a permit of k slots, the writer's slots), a row per ending otherwise.
 */
export async function readSlotHistory(
  kind: SlotKind,
  resource: string,
  slots: readonly number[],
  limit: number,
  now = Date.now(),
): Promise<SlotHistoryResponse> {
  const [reads, keys] = await Promise.all([
    Promise.all(slots.map(async (slot) => ({ slot, read: await readLockHistory(slotName(kind, resource, slot), PER_SLOT, now) }))),
    slotKeys(kind, resource),
  ]);
  const rows = new Map<string, SlotHold>();
  for (const { slot, read } of reads) {
    // The holds on the slot's keys now, whoever took them (a client of the package has no history):
    // the reader's own "held now" reads the mutex key of the slot's name, which is not the slot.
    for (const hold of holdsOf(read.entries, now, currentHolds(keys, slot))) {
      const entries = read.entries.filter((e) => e.token === hold.token);
      if (!isSlotHold(kind, hold, entries)) continue;
      const key = `${hold.token} ${hold.ended} ${hold.endedAt}`;
      const row = rows.get(key);
      if (row) row.slots.push(slot);
      else rows.set(key, { ...hold, slots: [slot], role: roleOf(kind, entries) });
    }
  }
  // A reader holds one slot: a hold over several is the writer, whatever took it.
  for (const row of rows.values()) if (kind === 'rwlock' && row.slots.length > 1) row.role = 'writer';
  return {
    kind,
    resource,
    slots: [...slots],
    holds: [...rows.values()].sort((a, b) => b.grantedAt - a.grantedAt).slice(0, limit),
    nodesRead: Math.min(...reads.map((r) => r.read.nodesRead)),
    nodesFailed: Math.max(...reads.map((r) => r.read.nodesFailed)),
  };
}

/** The slot lock's keys read on every master now; null when they could not be read (the history stands without them). */
async function slotKeys(kind: SlotKind, resource: string): Promise<SlotLockDetailResponse | null> {
  try {
    return await getSlotLock(kind, resource);
  } catch {
    return null;
  }
}

/** The holds on `slot`'s key now: one per token on a node that could be read, with the holder's metadata. */
function currentHolds(keys: SlotLockDetailResponse | null, slot: number): CurrentHold[] {
  const byToken = new Map<string, CurrentHold>();
  if (!keys?.lock) return [];
  for (const cell of keys.lock.rows.find((r) => r.slot === slot)?.view.cells ?? []) {
    if (!cell.known || !cell.present || cell.token === null || byToken.has(cell.token)) continue;
    byToken.set(cell.token, { token: tokenFingerprint(cell.token), meta: cell.meta ?? {}, seenAt: keys.readAt });
  }
  return [...byToken.values()];
}

/**
 * Whether a hold in a slot's history is the slot's: its grant is the lock service's grant of this
 * kind, or its grant is not in the history (taken outside the lock service, or pushed out): then
 * the slot's entries or its keys name it.
 */
function isSlotHold(kind: SlotKind, hold: LockHold, entries: readonly LockHistoryEntry[]): boolean {
  if (!hold.grantSeen) return true;
  const grant = entries.find((e) => e.event === 'granted');
  return grant !== undefined && SLOT_GRANT[kind].some((p) => grant.detail.startsWith(p));
}

/** A read-write lock's writer holds every slot (its entries name them all) and its grant says so; a reader holds one. */
function roleOf(kind: SlotKind, entries: readonly LockHistoryEntry[]): SlotHold['role'] {
  if (kind === 'semaphore') return 'permit';
  const writer = entries.some((e) => e.resources.length > 1 || (e.event === 'granted' && e.detail.startsWith('write lock:')));
  return writer ? 'writer' : 'reader';
}
