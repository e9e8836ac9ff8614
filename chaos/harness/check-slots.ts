/**
 * The checkers of the semaphores and read-write locks the slot loops take (chaos/workers/slot-loop.ts).
 * A grant's hold interval is the mutex's: [acquire ok, min(release invoke, validity end)), so a paused
 * holder's ends at its validity, however late it releases.
 *
 * - **capacity**: at no moment do a semaphore's holders within their validity hold more than its
 *   `limit` permits (a grant of k permits counts k), nor does a read-write lock have more than
 *   `maxReaders` readers. Counted from the holders alone, whatever slots the core says it gave them:
 *   a core that hands out a slot too many is caught here, not by the per-slot checks.
 * - **rw-exclusion**: no writer within its validity while a reader or another writer of its lock is
 *   within theirs.
 * - **slot-overlap** and **slot-fencing**: each slot is a mutex (docs/semaphores.md), so the
 *   mutex's overlap and fencing checkers run per slot: no two holders of one slot at once; fences
 *   strictly increasing in grant order per slot (for a read-write lock, whose writers hold every
 *   slot: writers in grant order, and a reader above the writer before it and below the one after);
 *   the slot's fenced register never accepting a lower fence or a stale write. Not across slots:
 *   the core promises no order there.
 * - **slot-hygiene**: the mutex's hygiene checker over the grants (no slot or intent key left after
 *   quiescence + ttl, no grant without validity, no late extend, no key of another deleted, nothing
 *   of a released grant left, nothing of a rejected acquire left where it answered).
 */
import { checkFencing, type FencingResult } from './check-fencing';
import { checkHygiene, type HygieneResult } from './check-hygiene';
import { checkOverlap, type OverlapResult } from './check-overlap';
import { attemptOf, NS_PER_MS, type ClientEvent, type LeakedKey, type LiveKey, type NemesisEvent, type RegisterRecord } from './history';
import { holdEnd } from './locks';
import { grantsByObject, indexSlotGrants, perSlotRecords, type SlotGrant } from './slot-locks';
import { isSlotRegister } from './slot-names';
import { quantile } from './stats';

export interface SlotCheckResult {
  violations: number;
  examples: string[];
}

export interface SlotAnalysis {
  grants: { sem: number; read: number; write: number };
  failures: number;
  failuresByClass: Record<string, number>;
  /** Acquire invoke → ok of the grants (waiting and retries included), ms. */
  p50Ms: number | null;
  p99Ms: number | null;
  capacity: SlotCheckResult;
  rwExclusion: SlotCheckResult;
  slotOverlap: OverlapResult;
  fencing: FencingResult;
  hygiene: HygieneResult;
  violations: number;
  caughtBy: string[];
}

const MAX_EXAMPLES = 10;
const ms = (ns: number) => (ns / NS_PER_MS).toFixed(1);
const role = (g: SlotGrant) => (g.kind === 'write' ? 'writer' : 'reader');

/** Sweep an object's grants in start order, calling `meet(open, next)` with the holds still open at each start. */
function sweep(list: readonly SlotGrant[], meet: (open: readonly SlotGrant[], next: SlotGrant) => void): void {
  let open: SlotGrant[] = [];
  for (const g of list) {
    if (holdEnd(g) <= g.ok) continue;
    open = open.filter((o) => holdEnd(o) > g.ok);
    meet(open, g);
    open.push(g);
  }
}

/** More permits held at once than the semaphore's limit, or more readers than maxReaders. */
export function checkCapacity(grants: readonly SlotGrant[]): SlotCheckResult {
  const result: SlotCheckResult = { violations: 0, examples: [] };
  for (const [object, list] of grantsByObject(grants)) {
    const counted = list.filter((g) => g.kind !== 'write');
    if (counted.length === 0) continue;
    const limit = Math.min(...counted.map((g) => g.limit));
    const weight = (g: SlotGrant) => (g.kind === 'sem' ? Math.max(g.permits, g.slots.length) : 1);
    sweep(counted, (open, g) => {
      const held = open.reduce((sum, o) => sum + weight(o), weight(g));
      if (held <= limit) return;
      result.violations++;
      if (result.examples.length < MAX_EXAMPLES)
        result.examples.push(
          `${object} (limit ${limit}): ${held} ${g.kind === 'sem' ? 'permits' : 'readers'} held at once, ` +
            `${[...open, g].map((o) => `${o.lock} (slots ${o.slots.join(',')})`).join(', ')}, from ${ms(g.ok)} ms`,
        );
    });
  }
  return result;
}

/** A writer within its validity while a reader or another writer of its lock is within theirs. */
export function checkRwExclusion(grants: readonly SlotGrant[]): SlotCheckResult {
  const result: SlotCheckResult = { violations: 0, examples: [] };
  for (const [object, list] of grantsByObject(grants)) {
    if (list[0]?.kind === 'sem') continue;
    sweep(list, (open, g) => {
      for (const o of open) {
        if (o.kind !== 'write' && g.kind !== 'write') continue;
        result.violations++;
        if (result.examples.length < MAX_EXAMPLES)
          result.examples.push(
            `${object}: ${role(o)} ${o.lock} and ${role(g)} ${g.lock} held it together for ${ms(Math.min(holdEnd(o), holdEnd(g)) - g.ok)} ms`,
          );
      }
    });
  }
  return result;
}

/**
 * The keys read at quiescence that can tell something of the acquire whose id they carry: a grant's
 * own slots (a key of an earlier, refused attempt of it on another slot answers to that attempt's
 * cleanup, which the grant does not report), and any slot of a refused acquire's object (its
 * `cleanupPending` names the nodes of every attempt: the core's retry loop, acquire-loop.ts). Not a
 * writer's intent key: the intent is withdrawn on its own, outside the acquire's cleanup.
 */
function judgedKeys(live: readonly LiveKey[], grants: ReadonlyMap<string, SlotGrant>, refused: ReadonlyMap<string, string>): LiveKey[] {
  return live.filter((k) => {
    const id = attemptOf(k.value) ?? '';
    const g = grants.get(id);
    // An object (`sem:<name>`, `rw:<name>`) is its slot keys' name without the slot.
    if (g) return g.slots.some((slot) => k.key.endsWith(`${g.resource}:${slot}`));
    const object = refused.get(id);
    const colon = k.key.lastIndexOf(':');
    return object !== undefined && /^\d+$/.test(k.key.slice(colon + 1)) && k.key.slice(0, colon).endsWith(object);
  });
}

export interface SlotHistory {
  events: readonly ClientEvent[];
  register: readonly RegisterRecord[];
  nemesis: readonly NemesisEvent[];
  /** Slot and intent keys still on a node after quiescence + ttl. */
  leakedKeys: readonly LeakedKey[];
  /** Slot and intent keys at quiescence, before the leases ran out. */
  liveKeys?: readonly LiveKey[];
}

/** Run the slot checkers over one phase's history. */
export function analyzeSlots(history: SlotHistory, toleranceMs: number): SlotAnalysis {
  const { grants, failures } = indexSlotGrants(history.events);
  const capacity = checkCapacity(grants);
  const rwExclusion = checkRwExclusion(grants);
  const perSlot = perSlotRecords(grants);
  const slotOverlap = checkOverlap(perSlot.values());
  const fencing = checkFencing(
    perSlot,
    history.register.filter((r) => isSlotRegister(r.resource)),
  );
  const byId = new Map(grants.map((g) => [g.lock, g]));
  const refused = new Map(failures.map((f) => [f.lock, f.resource]));
  const judged = judgedKeys(history.liveKeys ?? [], byId, refused);
  const hygiene = checkHygiene(grants, history.nemesis, history.leakedKeys, toleranceMs, failures, judged);
  const fencingViolations =
    fencing.grantOrderViolations + fencing.registerViolations + fencing.duplicateFences + fencing.staleAcceptedFenced;
  const hygieneViolations = hygiene.leakedKeys + hygiene.foreignDeletes + hygiene.expiredGrants + hygiene.lateExtends + hygiene.leftovers;
  const found: Array<[string, number]> = [
    ['capacity', capacity.violations],
    ['rw-exclusion', rwExclusion.violations],
    ['slot-overlap', slotOverlap.overlaps],
    ['slot-fencing', fencingViolations],
    ['slot-hygiene', hygieneViolations],
  ];
  const latencies = grants.map((g) => (g.ok - g.invoke) / NS_PER_MS);
  const failuresByClass: Record<string, number> = {};
  for (const f of failures) failuresByClass[f.error] = (failuresByClass[f.error] ?? 0) + 1;
  return {
    grants: { sem: count(grants, 'sem'), read: count(grants, 'read'), write: count(grants, 'write') },
    failures: failures.length,
    failuresByClass,
    p50Ms: quantile(latencies, 0.5),
    p99Ms: quantile(latencies, 0.99),
    capacity,
    rwExclusion,
    slotOverlap,
    fencing,
    hygiene,
    violations: found.reduce((sum, [, n]) => sum + n, 0),
    caughtBy: found.filter(([, n]) => n > 0).map(([name]) => name),
  };
}

const count = (grants: readonly SlotGrant[], kind: SlotGrant['kind']) => grants.filter((g) => g.kind === kind).length;

/** The examples of a slot analysis, the capacity and exclusion ones first. */
export function slotExamples(a: SlotAnalysis): string[] {
  const overlaps = a.slotOverlap.examples.map(
    (e) => `slot overlap on ${e.resource}: ${e.first} and ${e.second} held it together for ${e.overlapMs.toFixed(1)} ms`,
  );
  return [...a.capacity.examples, ...a.rwExclusion.examples, ...overlaps, ...a.fencing.examples, ...a.hygiene.examples];
}
