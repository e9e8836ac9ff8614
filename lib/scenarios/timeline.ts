/**
 * Timeline assembly: turn the sampler's raw readings of every node into lane segments. Pure.
 *
 * A sample is one read of one node at time t: for each resource of the scenario, the holder of
 * its lock key there (by the client name in the holder metadata) and the key's remaining TTL.
 * Consecutive samples of the same token with the same expiry (within `toleranceMs`) extend one
 * segment; a new token, a changed expiry (an extension, a drift step) or a gap starts another.
 */

export interface KeyReading {
  resource: string;
  /** Client name from the holder metadata; '?' when the key has none. */
  client: string;
  token: string;
  /** PTTL in ms (−1: no TTL). */
  pttl: number;
}

export interface NodeSample {
  t: number;
  node: number;
  /** false: the node did not answer (down, paused, too slow): nothing can be said about its keys. */
  ok: boolean;
  keys: readonly KeyReading[];
  /**
   * The quarantine the node's epoch sentinel records for the run's prefix, its end converted to run
   * time with the node's own clock; null when none is running; absent when not read.
   */
  quarantine?: { until: number; cause: string } | null;
  /** The node's fence register for the run's prefix; null when it has none; absent when not read. */
  fence?: number | null;
}

export interface KeySegment {
  node: number;
  resource: string;
  client: string;
  token: string;
  /** First sample that saw it. */
  from: number;
  /** When it was last seen, or when it vanished (never later than its expiry). */
  to: number;
  expiresAt: number;
  /** Still there at the last sample. */
  open: boolean;
}

/** Expiry jitter between two readings of one key (a loaded machine answers late); drift steps move it by more. */
export const EXPIRY_TOLERANCE_MS = 150;

export function assembleKeySegments(samples: readonly NodeSample[], toleranceMs = EXPIRY_TOLERANCE_MS): KeySegment[] {
  const out: KeySegment[] = [];
  const current = new Map<string, KeySegment>();
  const ordered = samples.slice().sort((a, b) => a.t - b.t || a.node - b.node);
  const close = (key: string, at: number | null) => {
    const seg = current.get(key);
    if (!seg) return;
    if (at !== null) seg.to = Math.max(seg.to, Math.min(at, seg.expiresAt));
    seg.open = false;
    out.push(seg);
    current.delete(key);
  };
  for (const sample of ordered) {
    if (!sample.ok) {
      // Unreadable: end what we saw at the last reading (we do not know what happened after).
      for (const key of [...current.keys()]) if (current.get(key)!.node === sample.node) close(key, null);
      continue;
    }
    const seen = new Set<string>();
    for (const reading of sample.keys) {
      const key = `${sample.node}\u0000${reading.resource}`;
      seen.add(key);
      const expiresAt = reading.pttl >= 0 ? sample.t + reading.pttl : Number.POSITIVE_INFINITY;
      const seg = current.get(key);
      if (seg && seg.token === reading.token && Math.abs(seg.expiresAt - expiresAt) <= toleranceMs) {
        seg.to = sample.t;
        seg.expiresAt = expiresAt;
        continue;
      }
      if (seg) close(key, sample.t);
      current.set(key, {
        node: sample.node,
        resource: reading.resource,
        client: reading.client,
        token: reading.token,
        from: sample.t,
        to: sample.t,
        expiresAt,
        open: true,
      });
    }
    for (const key of [...current.keys()]) {
      if (current.get(key)!.node === sample.node && !seen.has(key)) close(key, sample.t);
    }
  }
  for (const seg of current.values()) out.push(seg);
  return out.sort((a, b) => a.node - b.node || a.from - b.from || a.resource.localeCompare(b.resource));
}

export interface StateObservation<S extends string> {
  t: number;
  node: number;
  state: S;
  detail: string;
}

export interface StateSegment<S extends string> {
  node: number;
  from: number;
  /** null: still in this state. */
  to: number | null;
  state: S;
  detail: string;
}

/** Merge observations of node states into segments (same state and detail: one segment). */
export function assembleStateSegments<S extends string>(observations: readonly StateObservation<S>[]): StateSegment<S>[] {
  const out: StateSegment<S>[] = [];
  const last = new Map<number, StateSegment<S>>();
  const ordered = observations.slice().sort((a, b) => a.t - b.t || a.node - b.node);
  for (const o of ordered) {
    const cur = last.get(o.node);
    if (cur && cur.state === o.state && cur.detail === o.detail) continue;
    if (cur) cur.to = o.t;
    const seg: StateSegment<S> = { node: o.node, from: o.t, to: null, state: o.state, detail: o.detail };
    out.push(seg);
    last.set(o.node, seg);
  }
  return out.sort((a, b) => a.node - b.node || a.from - b.from);
}

export interface QuarantineSegment {
  node: number;
  /** First reading that showed it. */
  from: number;
  /** Its end as last read, or the reading that no longer showed it (ended early: marked clean). */
  to: number;
  cause: string;
  /** Still running at the last reading. */
  open: boolean;
}

/**
 * Quarantine segments from the node readings: readings of the same end (within `toleranceMs`: two
 * readings convert the node's clock with different delays) are one quarantine; an unreadable node
 * or a reading without the sentinel says nothing.
 */
export function assembleQuarantineSegments(samples: readonly NodeSample[], toleranceMs = EXPIRY_TOLERANCE_MS): QuarantineSegment[] {
  const out: QuarantineSegment[] = [];
  const current = new Map<number, QuarantineSegment>();
  const close = (node: number, at: number) => {
    const seg = current.get(node);
    if (!seg) return;
    seg.to = Math.min(seg.to, at);
    seg.open = false;
    current.delete(node);
  };
  for (const s of samples.slice().sort((a, b) => a.t - b.t || a.node - b.node)) {
    if (!s.ok || s.quarantine === undefined) continue;
    const q = s.quarantine;
    const seg = current.get(s.node);
    if (q === null || q.until <= s.t) {
      close(s.node, s.t);
      continue;
    }
    if (seg && seg.cause === q.cause && Math.abs(seg.to - q.until) <= toleranceMs) {
      seg.to = q.until;
      continue;
    }
    close(s.node, s.t);
    const next: QuarantineSegment = { node: s.node, from: s.t, to: q.until, cause: q.cause, open: true };
    current.set(s.node, next);
    out.push(next);
  }
  return out.sort((a, b) => a.node - b.node || a.from - b.from);
}

export interface FenceChange {
  node: number;
  /** Run time of the first reading that showed the value. */
  at: number;
  value: number;
}

/**
 * Each node's fence register as it moved: the first value read, then every change (a grant's
 * fence round raising it, a node coming back with an older register, a flush taking it away: 0).
 */
export function assembleFenceChanges(samples: readonly NodeSample[]): FenceChange[] {
  const last = new Map<number, number>();
  const out: FenceChange[] = [];
  for (const s of samples.slice().sort((a, b) => a.t - b.t || a.node - b.node)) {
    if (!s.ok || s.fence === undefined) continue;
    const value = s.fence ?? 0;
    if (last.get(s.node) === value) continue;
    last.set(s.node, value);
    out.push({ node: s.node, at: s.t, value });
  }
  return out.sort((a, b) => a.node - b.node || a.at - b.at);
}
