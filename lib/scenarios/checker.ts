/**
 * The live mutual-exclusion checker. It looks only at what clients BELIEVE (from the moment an
 * acquire answered until the client released, or its validity ended, or, for a paused client,
 * until it woke and acted), never at the nodes: two clients believing they hold the same resource
 * at the same time is the violation, whatever the keys say. A semaphore of `limit` permits (the
 * run's resource says its limit) is the same rule counted: more than `limit` clients believing at
 * once is the violation.
 */

export interface Belief {
  client: string;
  resource: string;
  from: number;
  /** End of the validity the lock core reported. */
  validUntil: number;
  /** End of the belief; null while it goes on. */
  to: number | null;
}

export interface OverlapFinding {
  resource: string;
  /** The clients that believed at once: two for a lock, `limit` + 1 or more for a semaphore. */
  clients: string[];
  from: number;
  to: number;
  open: boolean;
  /**
   * More clients than the resource allows were inside their validity at once for part of the
   * overlap (for a lock: both): the protocol's own guarantee broke.
   */
  bothValid: boolean;
}

export interface CheckerResult {
  ok: boolean;
  resources: Array<{ resource: string; ok: boolean; holders: number; limit: number; overlaps: OverlapFinding[] }>;
}

/**
 * Every overlap between beliefs of different clients on the same resource, as of `now`.
 * `resources` lists the resources to report even when nobody ever held them (in that order);
 * `limits` gives a semaphore's number of permits by resource (1, a lock, for the others).
 */
export function checkMutualExclusion(
  beliefs: readonly Belief[],
  now: number,
  resources: readonly string[] = [],
  limits: Readonly<Record<string, number>> = {},
): CheckerResult {
  const names = [...resources];
  for (const b of beliefs) if (!names.includes(b.resource)) names.push(b.resource);
  const out: CheckerResult['resources'] = [];
  for (const resource of names) {
    const mine = beliefs.filter((b) => b.resource === resource).sort((a, b) => a.from - b.from || a.client.localeCompare(b.client));
    const limit = limits[resource] ?? 1;
    const overlaps = limit > 1 ? excessOf(resource, mine, limit, now) : pairsOf(resource, mine, now);
    const holders = new Set(mine.filter((b) => b.from <= now && (b.to === null || b.to > now)).map((b) => b.client)).size;
    out.push({ resource, ok: overlaps.length === 0, holders, limit, overlaps });
  }
  return { ok: out.every((r) => r.ok), resources: out };
}

/** A lock: every pair of beliefs of two clients that overlap. */
function pairsOf(resource: string, mine: readonly Belief[], now: number): OverlapFinding[] {
  const overlaps: OverlapFinding[] = [];
  for (let i = 0; i < mine.length; i++) {
    for (let j = i + 1; j < mine.length; j++) {
      const a = mine[i]!;
      const b = mine[j]!;
      if (a.client === b.client) continue;
      const aEnd = a.to ?? now;
      const bEnd = b.to ?? now;
      const from = Math.max(a.from, b.from);
      const to = Math.min(aEnd, bEnd);
      if (to <= from) continue;
      const validEnd = Math.min(to, a.validUntil, b.validUntil);
      overlaps.push({
        resource,
        clients: [a.client, b.client],
        from,
        to,
        open: (a.to === null && to === aEnd) || (b.to === null && to === bEnd),
        bothValid: validEnd > from,
      });
    }
  }
  return overlaps;
}

/**
 * A semaphore of `limit` permits: each stretch of time in which more than `limit` permits were
 * believed held at once (a client holding two counts twice), one finding per stretch with the same
 * holders (a change of who believes starts another).
 */
function excessOf(resource: string, mine: readonly Belief[], limit: number, now: number): OverlapFinding[] {
  const end = (b: Belief) => Math.min(b.to ?? now, now);
  const cuts = [...new Set(mine.flatMap((b) => [b.from, end(b)]))].sort((a, b) => a - b);
  const out: OverlapFinding[] = [];
  for (let i = 0; i + 1 < cuts.length; i++) {
    const from = cuts[i]!;
    const to = cuts[i + 1]!;
    const during = mine.filter((b) => b.from <= from && end(b) >= to);
    // Permits, not clients: a client that believes it holds two permits counts twice (it is named twice).
    const clients = during.map((b) => b.client);
    if (clients.length <= limit) continue;
    // Validity only ends within a stretch: the count at its start is the most there were.
    const valid = during.filter((b) => b.validUntil > from).length > limit;
    const open = during.some((b) => b.to === null) && to === now;
    const last = out.at(-1);
    if (last && last.to === from && last.clients.join() === clients.join()) {
      Object.assign(last, { to, open, bothValid: last.bothValid || valid });
    } else out.push({ resource, clients, from, to, open, bothValid: valid });
  }
  return out;
}
