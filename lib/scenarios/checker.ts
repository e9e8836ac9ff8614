/**
 * The live mutual-exclusion checker. It looks only at what clients BELIEVE (from the moment an
 * acquire answered until the client released, or its validity ended, or, for a paused client,
 * until it woke and acted), never at the nodes: two clients believing they hold the same resource
 * at the same time is the violation, whatever the keys say.
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
  clients: [string, string];
  from: number;
  to: number;
  open: boolean;
  /** Both clients were inside their validity for part of the overlap: the protocol's own guarantee broke. */
  bothValid: boolean;
}

export interface CheckerResult {
  ok: boolean;
  resources: Array<{ resource: string; ok: boolean; holders: number; overlaps: OverlapFinding[] }>;
}

/**
 * Every overlap between beliefs of different clients on the same resource, as of `now`.
 * `resources` lists the resources to report even when nobody ever held them (in that order).
 */
export function checkMutualExclusion(beliefs: readonly Belief[], now: number, resources: readonly string[] = []): CheckerResult {
  const names = [...resources];
  for (const b of beliefs) if (!names.includes(b.resource)) names.push(b.resource);
  const out: CheckerResult['resources'] = [];
  for (const resource of names) {
    const mine = beliefs.filter((b) => b.resource === resource).sort((a, b) => a.from - b.from || a.client.localeCompare(b.client));
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
    const holders = new Set(mine.filter((b) => b.from <= now && (b.to === null || b.to > now)).map((b) => b.client)).size;
    out.push({ resource, ok: overlaps.length === 0, holders, overlaps });
  }
  return { ok: out.every((r) => r.ok), resources: out };
}
