/**
 * Semaphores and read-write locks as the masters hold them. Pure (no I/O): slot-read.ts reads
 * the keys, this module groups them per lock and says who holds what.
 *
 * A permit of a semaphore is a mutex on a slot key (`<prefix>sem:<r>:<i>`), a reader of a
 * read-write lock a mutex on one reader slot (`<prefix>rw:<r>:<i>`), its writer one grant of
 * every slot, and a waiting writer's intent a mutex on `<prefix>rw:<r>:intent` (keys.ts owns the
 * layout; docs/semaphores.md, docs/rwlocks.md). So each key is judged exactly as a lock key is
 * (quorum-view.ts): a slot counts as held only where one token is on a quorum of the masters
 * (`held` or `expiring`), never by counting keys on one node, which docs/semaphores.md shows
 * unsafe. The holders are the tokens that hold slots: a permit of k slots is one token on k
 * slots, a writer one token on every slot.
 */
import { rwKeyOf, semaphoreSlotOf } from '@redlock-console/redlock';
import { quorumView, type LockCell, type QuorumOptions, type QuorumView } from './quorum-view';
import { nodeNumber } from '../node-number';

/** The kinds of lock made of slots; the mutex is the third kind the console lists. */
export const SLOT_KINDS = Object.freeze(['semaphore', 'rwlock'] as const);
export type SlotKind = (typeof SLOT_KINDS)[number];

/** One key of a slot lock across the nodes: a slot (its index) or, for a read-write lock, the intent (`slot` null). */
export interface SlotRow {
  slot: number | null;
  view: QuorumView;
}

/** A token that holds slots on a quorum: a permit, a reader, the writer, or a waiting writer's intent. */
export interface SlotHolder {
  token: string;
  /** The slots it holds on a quorum, ascending (empty for an intent). */
  slots: number[];
  role: 'permit' | 'reader' | 'writer' | 'intent';
  fence: number | null;
  /** The least validity over its slots. */
  validityMs: number | null;
  meta: Record<string, string> | null;
}

/** One semaphore or read-write lock: its slots, who holds them, and what is unsettled. */
export interface SlotLock {
  kind: SlotKind;
  resource: string;
  /** The `limit` (semaphore) or `maxReaders` (read-write lock) its holders recorded; null when none did. */
  limit: number | null;
  /** Slots held on a quorum. */
  held: number;
  /** Holders of slots, by their first slot; the intent is `intent`, not here. */
  holders: SlotHolder[];
  /** A read-write lock's mode: readers, the writer, or none on a quorum; null for a semaphore. */
  mode: 'free' | 'read' | 'write' | null;
  /** A waiting writer's intent held on a quorum (read-write locks), or null. */
  intent: SlotHolder | null;
  /** Keys on some node that hold no quorum (a failed attempt's leftovers, a split): a slot that is neither free nor held. */
  unsettled: number;
  /** Every key read, slots by index, the intent last. */
  rows: SlotRow[];
}

/** Which slot lock a key belongs to, and which slot it is (null: the intent), or null when it is none of `kind`'s keys. */
export function slotKeyOf(kind: SlotKind, keyPrefix: string, key: string): { resource: string; slot: number | null } | null {
  return kind === 'semaphore' ? semaphoreSlotOf(keyPrefix, key) : rwKeyOf(keyPrefix, key);
}

const isHeld = (view: QuorumView) => view.majorityToken !== null && (view.state === 'held' || view.state === 'expiring');

/** The recorded `limit` of a holder's metadata, when it is a whole number. */
function limitOf(meta: Record<string, string> | null): number | null {
  const n = Number(meta?.limit);
  return meta?.limit !== undefined && Number.isInteger(n) && n > 0 ? n : null;
}

/** Who holds a read-write lock's slots: the metadata's mode (`rw`), else one slot is a reader and more a writer. */
function rwRole(meta: Record<string, string> | null, slots: number): 'reader' | 'writer' {
  if (meta?.rw === 'write') return 'writer';
  if (meta?.rw === 'read') return 'reader';
  return slots > 1 ? 'writer' : 'reader';
}

/** Summarise one lock from its rows (any order). */
export function summarise(kind: SlotKind, resource: string, rows: readonly SlotRow[]): SlotLock {
  const sorted = rows.slice().sort((a, b) => (a.slot ?? Number.MAX_SAFE_INTEGER) - (b.slot ?? Number.MAX_SAFE_INTEGER));
  const byToken = new Map<string, SlotHolder>();
  let held = 0;
  let unsettled = 0;
  let limit: number | null = null;
  let intent: SlotHolder | null = null;
  for (const { slot, view } of sorted) {
    for (const cell of view.cells) {
      const recorded = limitOf(cell.meta);
      if (recorded !== null && (limit === null || recorded > limit)) limit = recorded;
    }
    if (!isHeld(view)) {
      unsettled++;
      continue;
    }
    const token = view.majorityToken!;
    if (slot === null) {
      intent = { token, slots: [], role: 'intent', fence: view.fence, validityMs: view.validityMs, meta: view.meta };
      continue;
    }
    held++;
    const holder = byToken.get(token);
    if (holder) {
      holder.slots.push(slot);
      if (view.validityMs !== null && (holder.validityMs === null || view.validityMs < holder.validityMs))
        holder.validityMs = view.validityMs;
      holder.fence ??= view.fence;
      holder.meta ??= view.meta;
    } else {
      byToken.set(token, { token, slots: [slot], role: 'permit', fence: view.fence, validityMs: view.validityMs, meta: view.meta });
    }
  }
  const holders = [...byToken.values()];
  if (kind === 'rwlock') for (const h of holders) h.role = rwRole(h.meta, h.slots.length);
  const mode = kind === 'semaphore' ? null : holders.some((h) => h.role === 'writer') ? 'write' : holders.length > 0 ? 'read' : 'free';
  return { kind, resource, limit, held, holders, mode, intent, unsettled, rows: sorted };
}

/**
 * Group keys read on every node into slot locks, sorted by resource. `readings` has one entry per
 * node (in node order): null for a node that could not be read (its cells are unknown), else its
 * keys. Keys that are not `kind`'s are left out.
 */
export function groupSlotLocks(
  kind: SlotKind,
  keyPrefix: string,
  readings: readonly (ReadonlyMap<string, Omit<LockCell, 'node' | 'known' | 'present'>> | null)[],
  options: QuorumOptions,
): SlotLock[] {
  const keys = new Set<string>();
  for (const reading of readings) for (const key of reading?.keys() ?? []) keys.add(key);
  const rowsOf = new Map<string, SlotRow[]>();
  for (const key of keys) {
    const at = slotKeyOf(kind, keyPrefix, key);
    if (!at) continue;
    const cells = readings.map((reading, i): LockCell => {
      const found = reading?.get(key);
      if (found) return { node: nodeNumber(i), known: true, present: true, ...found };
      return { node: nodeNumber(i), known: reading !== null, present: false, token: null, pttlMs: null, meta: null };
    });
    const rows = rowsOf.get(at.resource) ?? [];
    rows.push({ slot: at.slot, view: quorumView(at.resource, key, cells, options) });
    rowsOf.set(at.resource, rows);
  }
  return [...rowsOf.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([resource, rows]) => summarise(kind, resource, rows));
}
