import { NS_PER_MS } from './history';
import type { AcquireFailure, LockRecord } from './locks';

/** The q-quantile (0…1) of `values` by nearest rank; null when empty. */
export function quantile(values: readonly number[], q: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank]!;
}

export interface AcquireStats {
  successes: number;
  /** Successful acquisitions whose hold started while the nemesis had a fault in place. */
  successesUnderFault: number;
  failures: number;
  failuresByClass: Record<string, number>;
  /** Acquire invoke → ok of successful acquisitions (waiting and retries included), ms. */
  p50Ms: number | null;
  p99Ms: number | null;
  /** Locks whose writes went to the fenced register / the unfenced one. */
  fencedSuccesses: number;
  unfencedSuccesses: number;
}

/** Acquisition figures of one phase. `faultWindows`: [start, end) intervals with a fault in place. */
export function acquireStats(
  locks: Iterable<LockRecord>,
  failures: readonly AcquireFailure[],
  faultWindows: ReadonlyArray<readonly [number, number]>,
): AcquireStats {
  const latencies: number[] = [];
  let underFault = 0;
  let fenced = 0;
  for (const rec of locks) {
    latencies.push((rec.ok - rec.invoke) / NS_PER_MS);
    if (rec.fenced) fenced++;
    if (faultWindows.some(([from, to]) => rec.ok >= from && rec.ok < to)) underFault++;
  }
  const byClass: Record<string, number> = {};
  for (const f of failures) byClass[f.error] = (byClass[f.error] ?? 0) + 1;
  const round = (v: number | null) => (v === null ? null : Math.round(v * 100) / 100);
  return {
    successes: latencies.length,
    successesUnderFault: underFault,
    failures: failures.length,
    failuresByClass: byClass,
    p50Ms: round(quantile(latencies, 0.5)),
    p99Ms: round(quantile(latencies, 0.99)),
    fencedSuccesses: fenced,
    unfencedSuccesses: latencies.length - fenced,
  };
}

/** `INFO commandstats` → calls per command (`cmdstat_evalsha:calls=12,...`). */
export function parseCommandStats(info: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of info.split('\n')) {
    const m = /^cmdstat_([^:]+):calls=(\d+)/.exec(line.trim());
    if (m) out[m[1]!] = Number(m[2]);
  }
  return out;
}

/** Commands the harness itself or connection setup sends, left out of the per-acquisition cost. */
const NOT_LOCK_TRAFFIC = new Set(['info', 'config', 'scan', 'pttl', 'type', 'ping', 'client', 'hello', 'select', 'command']);

export interface CommandCost {
  /** Every command the nodes ran (Lua-internal calls included) per successful acquisition. */
  commandsPerAcquisition: number | null;
  /** Script calls (EVALSHA / EVAL, i.e. network round trips to one node) per successful acquisition. */
  scriptCallsPerAcquisition: number | null;
}

/** Per-acquisition cost from the commandstats of every node read at the end of a phase (reset at its start). */
export function commandCost(perNode: readonly Record<string, number>[], successes: number): CommandCost {
  let all = 0;
  let scripts = 0;
  for (const stats of perNode) {
    for (const [cmd, calls] of Object.entries(stats)) {
      if (NOT_LOCK_TRAFFIC.has(cmd)) continue;
      all += calls;
      if (cmd === 'evalsha' || cmd === 'eval') scripts += calls;
    }
  }
  if (successes === 0) return { commandsPerAcquisition: null, scriptCallsPerAcquisition: null };
  return {
    commandsPerAcquisition: Math.round((all / successes) * 100) / 100,
    scriptCallsPerAcquisition: Math.round((scripts / successes) * 100) / 100,
  };
}
