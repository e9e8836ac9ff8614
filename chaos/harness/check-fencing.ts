import { isFencedResource, type RegisterRecord } from './history';
import { locksByResource, type LockRecord } from './locks';

export interface FencingResult {
  /** Fenced grants whose fence is not above the fence of the grant before them on the resource. */
  grantOrderViolations: number;
  /** Writes the fenced register accepted with a fence lower than one it had accepted before. */
  registerViolations: number;
  /** Two different locks accepted with the same fence on one resource. */
  duplicateFences: number;
  /**
   * Accepted writes from a lock granted before another lock whose write was already accepted on
   * that resource: an old holder overwrote a newer one. Split by register kind.
   */
  staleAcceptedFenced: number;
  staleAcceptedUnfenced: number;
  /** Writes the register refused (fence below the highest it had seen). */
  rejectedFenced: number;
  examples: string[];
}

const MAX_EXAMPLES = 10;

/**
 * Checker 2, fencing: fences strictly increase in grant order (acquire-ok order, which is grant
 * order as long as checker 1 passes), the fenced register never accepts a fence lower than one it
 * accepted, and no write of an older holder is accepted after a newer holder's (a stale write).
 * The unfenced register accepts everything, so its stale writes measure what fencing prevents.
 */
export function checkFencing(locks: ReadonlyMap<string, LockRecord>, register: readonly RegisterRecord[]): FencingResult {
  const result: FencingResult = {
    grantOrderViolations: 0,
    registerViolations: 0,
    duplicateFences: 0,
    staleAcceptedFenced: 0,
    staleAcceptedUnfenced: 0,
    rejectedFenced: 0,
    examples: [],
  };
  const note = (line: string) => {
    if (result.examples.length < MAX_EXAMPLES) result.examples.push(line);
  };

  // Grant order: the rank of each lock among the grants of its resource.
  const rank = new Map<string, number>();
  for (const [resource, list] of locksByResource(locks.values())) {
    let previous: LockRecord | null = null;
    list.forEach((rec, i) => {
      rank.set(rec.lock, i);
      if (!rec.fenced || rec.fence === null) return;
      if (previous && previous.fence !== null && rec.fence <= previous.fence) {
        result.grantOrderViolations++;
        note(`${resource}: ${rec.lock} got fence ${rec.fence} after ${previous.lock} got ${previous.fence}`);
      }
      previous = rec;
    });
  }

  const highest = new Map<string, { fence: number; lock: string }>();
  const newestRank = new Map<string, number>();
  for (const w of register) {
    const fenced = isFencedResource(w.resource);
    if (!w.accepted) {
      if (fenced) result.rejectedFenced++;
      continue;
    }
    if (fenced && w.fence !== null) {
      const top = highest.get(w.resource);
      if (top && w.fence < top.fence) {
        result.registerViolations++;
        note(`${w.resource}: register accepted fence ${w.fence} from ${w.lock} after ${top.fence}`);
      } else if (top && w.fence === top.fence && w.lock !== top.lock) {
        result.duplicateFences++;
        note(`${w.resource}: ${w.lock} and ${top.lock} both wrote with fence ${w.fence}`);
      }
      if (!top || w.fence >= top.fence) highest.set(w.resource, { fence: w.fence, lock: w.lock });
    }
    const r = rank.get(w.lock);
    if (r === undefined) continue;
    const newest = newestRank.get(w.resource) ?? -1;
    if (r < newest) {
      if (fenced) result.staleAcceptedFenced++;
      else result.staleAcceptedUnfenced++;
      if (fenced) note(`${w.resource}: stale write of ${w.lock} accepted after a newer holder's`);
    } else {
      newestRank.set(w.resource, r);
    }
  }
  return result;
}
