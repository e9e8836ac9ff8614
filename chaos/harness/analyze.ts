import { checkFencing, type FencingResult } from './check-fencing';
import { checkHygiene, type HygieneResult } from './check-hygiene';
import { checkOverlap, type OverlapResult } from './check-overlap';
import { analyzeSlots, type SlotAnalysis } from './check-slots';
import type { NemesisEvent, PhaseHistory } from './history';
import { indexLocks } from './locks';
import { isSlotRegister } from './slot-names';
import { acquireStats, type AcquireStats } from './stats';

export interface PhaseAnalysis {
  acquisitions: AcquireStats;
  overlap: OverlapResult;
  fencing: FencingResult;
  hygiene: HygieneResult;
  writes: { accepted: number; rejected: number };
  /** The semaphore and read-write lock checkers (chaos/harness/check-slots.ts). */
  slots: SlotAnalysis;
  /** Safety violations: everything a safe configuration must keep at zero. */
  violations: number;
  /** Which checkers found something. */
  caughtBy: string[];
}

/** [fault, heal) intervals from the nemesis log (a fault still open at the end runs to `end`). */
export function faultWindows(nemesis: readonly NemesisEvent[], end: number): Array<[number, number]> {
  const windows: Array<[number, number]> = [];
  let open: number | null = null;
  for (const ev of nemesis) {
    if (ev.kind === 'fault' && open === null) open = ev.t;
    if (ev.kind === 'heal' && open !== null) {
      windows.push([open, ev.t]);
      open = null;
    }
  }
  if (open !== null) windows.push([open, end]);
  return windows;
}

/** Run the three checkers over one phase's history and gather its figures. */
export function analyzePhase(history: PhaseHistory, options: { toleranceMs: number; end: number }): PhaseAnalysis {
  const { locks, failures } = indexLocks(history.events);
  const overlap = checkOverlap(locks.values());
  const fencing = checkFencing(
    locks,
    history.register.filter((r) => !isSlotRegister(r.resource)),
  );
  const hygiene = checkHygiene(locks.values(), history.nemesis, history.leakedKeys, options.toleranceMs, failures, history.liveKeys);
  const slots = analyzeSlots(
    {
      events: history.events,
      register: history.register,
      nemesis: history.nemesis,
      leakedKeys: history.leakedSlotKeys ?? [],
      liveKeys: history.liveSlotKeys,
    },
    options.toleranceMs,
  );
  const acquisitions = acquireStats(locks.values(), failures, faultWindows(history.nemesis, options.end));
  let accepted = 0;
  for (const w of history.register) if (w.accepted) accepted++;
  const caughtBy: string[] = [];
  if (overlap.overlaps > 0) caughtBy.push('overlap');
  const fencingViolations =
    fencing.grantOrderViolations + fencing.registerViolations + fencing.duplicateFences + fencing.staleAcceptedFenced;
  if (fencingViolations > 0) caughtBy.push('fencing');
  const hygieneViolations = hygiene.leakedKeys + hygiene.foreignDeletes + hygiene.expiredGrants + hygiene.lateExtends + hygiene.leftovers;
  if (hygieneViolations > 0) caughtBy.push('hygiene');
  caughtBy.push(...slots.caughtBy);
  return {
    acquisitions,
    overlap,
    fencing,
    hygiene,
    writes: { accepted, rejected: history.register.length - accepted },
    slots,
    violations: overlap.overlaps + fencingViolations + hygieneViolations + slots.violations,
    caughtBy,
  };
}
