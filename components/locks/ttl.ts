import type { LockView } from '@/lib/api/locks';

/**
 * The lease a bar is drawn against: the holder's requested ttl when the metadata says it, else
 * the longest PTTL read (so the bar starts full rather than at an arbitrary fraction).
 */
export function leaseMs(view: LockView): number {
  const fromMeta = Number(view.meta?.ttlMs);
  if (Number.isFinite(fromMeta) && fromMeta > 0) return fromMeta;
  let max = 0;
  for (const cell of view.cells) if (cell.present && cell.pttlMs !== null && cell.pttlMs > max) max = cell.pttlMs;
  return Math.max(1, max);
}
