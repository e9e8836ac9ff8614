/**
 * Is the holder of a token alive? Read from the masters alone (pure: the caller reads the keys),
 * so it holds for any client of the package, not only the console's own core: the lock core's
 * value carries `acquiredAt` (the holder's wall clock at its grant), `extensions` (counted by
 * extend.lua) and `ttlMs` (the lease of the last grant or extend), and an extend resets the key's
 * TTL to `ttlMs` (PEXPIRE … GT). So on one node `ttlMs − PTTL` is how long ago the key was last
 * granted or extended (the node's own clock: no skew), and the extensions since the grant give
 * the holder's pace. A bare token (another library, no metadata) says none of this: `unknown`.
 */
import type { LockCell } from './quorum-view';

export type HolderPulse = 'alive' | 'stopped' | 'never-extended' | 'unknown';

export interface HolderLiveness {
  pulse: HolderPulse;
  /** Successful extensions since the grant (the most any node holding the token counted). */
  extensions: number;
  /** The holder's wall clock at its grant (its own claim: `acquiredAt`), or null. */
  acquiredAt: number | null;
  /** How long before the read the key was last extended (or granted, with no extension), or null. */
  sinceLastMs: number | null;
  /** The holder's pace: the time from its grant to its last extension over its extensions, or null. */
  everyMs: number | null;
  /**
   * When the holder learns it lost the lock at the latest, from the read: its next extension (at
   * its pace), else the end of its lease (its keys' PTTL), or null. A holder notices a lost lock
   * only when it next extends or checks; until then it goes on as if it held it.
   */
  learnsWithinMs: number | null;
}

/** A holder that extended within this many of its intervals (and half a second) is alive. */
const ALIVE_INTERVALS = 1.5;
const ALIVE_SLACK_MS = 500;

export function holderLiveness(cells: readonly LockCell[], token: string, readAt: number): HolderLiveness {
  let extensions = 0;
  let acquiredAt: number | null = null;
  let sinceLastMs: number | null = null;
  let pttlMax: number | null = null;
  let withMeta = false;
  for (const cell of cells) {
    if (!cell.known || !cell.present || cell.token !== token) continue;
    if (cell.pttlMs !== null && cell.pttlMs >= 0) pttlMax = Math.max(pttlMax ?? 0, cell.pttlMs);
    if (!cell.meta) continue;
    withMeta = true;
    extensions = Math.max(extensions, count(cell.meta.extensions) ?? 0);
    const at = count(cell.meta.acquiredAt);
    if (at !== null) acquiredAt = acquiredAt === null ? at : Math.min(acquiredAt, at);
    const ttl = count(cell.meta.ttlMs);
    if (ttl !== null && cell.pttlMs !== null && cell.pttlMs >= 0) {
      const since = Math.max(0, ttl - cell.pttlMs);
      sinceLastMs = sinceLastMs === null ? since : Math.min(sinceLastMs, since);
    }
  }
  if (!withMeta || sinceLastMs === null) {
    return { pulse: 'unknown', extensions, acquiredAt, sinceLastMs, everyMs: null, learnsWithinMs: pttlMax };
  }
  if (extensions === 0) {
    return { pulse: 'never-extended', extensions, acquiredAt, sinceLastMs, everyMs: null, learnsWithinMs: pttlMax };
  }
  // The holder's clock may differ from ours: a pace is never negative, and with no usable grant
  // time the pace is unknown (the last extension alone still says how fresh the holder is).
  const heldMs = acquiredAt === null ? null : readAt - acquiredAt - sinceLastMs;
  const everyMs = heldMs !== null && heldMs > 0 ? Math.round(heldMs / extensions) : null;
  const alive = everyMs !== null ? sinceLastMs <= everyMs * ALIVE_INTERVALS + ALIVE_SLACK_MS : pttlMax !== null;
  const nextExtend = everyMs !== null ? Math.max(0, everyMs - sinceLastMs) : null;
  const learnsWithinMs = nextExtend !== null && pttlMax !== null ? Math.min(nextExtend, pttlMax) : (nextExtend ?? pttlMax);
  return { pulse: alive ? 'alive' : 'stopped', extensions, acquiredAt, sinceLastMs, everyMs, learnsWithinMs };
}

function count(text: string | undefined): number | null {
  if (text === undefined || text === '') return null;
  const n = Number(text);
  return Number.isFinite(n) && n >= 0 ? n : null;
}
