import { parseEpoch, type EpochSentinel, type QuarantineCause } from '@redlock-console/redlock';

/** The node's quarantine as the lock core sees it: the epoch sentinel (`<prefix>epoch`), reconciled with the running process. */
export interface QuarantineInfo {
  /** clean: votes normally; quarantined: votes against until `until`; unknown: no epoch sentinel. */
  state: 'clean' | 'quarantined' | 'unknown';
  /** When the quarantine ends, on the node's clock (ms); null without a sentinel. */
  until: number | null;
  /** Time left on the node's clock; null unless quarantined. */
  remainingMs: number | null;
  origin: string | null;
  /** Why: the sentinel's cause, or 'restart' for a restart no client has recorded yet; null when none is known. */
  cause: QuarantineCause | null;
  /** The redis-server process (run_id) the sentinel speaks for, and the one before it. */
  runId: string | null;
  prevRunId: string | null;
  /** Node clock (ms) at which that process started, as the sentinel records it. */
  serverStartedAt: number | null;
  /** The sentinel's createdAt (node clock ms): what a mark-clean compares with the sentinel it finds. */
  createdAt: number | null;
  /** The lease ceiling recorded on the node. */
  recordedMaxTtlMs: number | null;
  /** The process running now is not the sentinel's, and no client has checked it yet: the next acquire records the restart. */
  restartPending: boolean;
  /** The warning a mark-clean of this node carries now (a restart or data loss within maxTtlMs), else null. */
  markCleanWarning: string | null;
  /** Plain English, e.g. 'restart detected (process 1a2b3c4d → 5e6f7a8b): quarantined until … (12.3 s left)'. */
  message: string;
}

/** What the sentinel is read against. */
export interface ProcessFacts {
  /** The node's clock now (ms). */
  nodeNow: number;
  /** INFO server run_id of the process running now; null when unreadable. */
  runIdNow: string | null;
  uptimeMs: number | null;
  /** The cluster's lease ceiling (a quarantine lasts this long). */
  maxTtlMs: number;
  /** Does the lock core quarantine (and detect restarts)? */
  enabled: boolean;
}

export const CAUSE_LABEL: Record<QuarantineCause, string> = {
  'data-loss': 'data loss',
  restart: 'restart detected',
  replaced: 'data replaced by replication',
  eviction: 'keys evicted',
  rollback: 'data went back in time',
  'clock-jump': 'clock jumped',
};

/** The first 8 characters of a run_id: enough to tell two processes apart on screen. */
export const shortRunId = (runId: string | null | undefined) => (runId ? runId.slice(0, 8) : '?');

/** Read the sentinel as a client's next check would: a restart it has not recorded yet counts. */
export function quarantineOf(raw: Record<string, string>, facts: ProcessFacts): QuarantineInfo {
  const epoch = parseEpoch(raw);
  const markCleanWarning = markCleanWarningOf(epoch, facts);
  if (!epoch) {
    return {
      state: 'unknown',
      until: null,
      remainingMs: null,
      origin: null,
      cause: null,
      runId: null,
      prevRunId: null,
      serverStartedAt: null,
      createdAt: null,
      recordedMaxTtlMs: null,
      restartPending: false,
      markCleanWarning,
      message: facts.enabled ? 'unknown: will be quarantined at the next acquire' : 'no epoch sentinel (quarantine disabled)',
    };
  }
  const base = {
    origin: epoch.origin,
    runId: epoch.runId ?? null,
    prevRunId: epoch.prevRunId ?? null,
    serverStartedAt: epoch.serverStartedAt ?? null,
    createdAt: epoch.createdAt,
    recordedMaxTtlMs: epoch.maxTtlMs || null,
    markCleanWarning,
  };
  // probe.lua's check: a sentinel of another process is a restart, quarantined until that process's start + ceiling.
  const restartPending = facts.enabled && facts.runIdNow !== null && epoch.runId !== facts.runIdNow;
  let until = epoch.quarantineUntil;
  let cause = epoch.cause ?? null;
  if (restartPending && facts.uptimeMs !== null) {
    const pendingUntil = facts.nodeNow - facts.uptimeMs + facts.maxTtlMs;
    if (pendingUntil > facts.nodeNow) cause = 'restart';
    until = Math.max(until, pendingUntil);
  }
  const remaining = until - facts.nodeNow;
  if (remaining <= 0) {
    return { ...base, state: 'clean', until: epoch.quarantineUntil, remainingMs: null, cause: null, restartPending, message: 'clean' };
  }
  const left = `quarantined until ${new Date(until).toISOString()} (${(remaining / 1000).toFixed(1)} s left)`;
  const processes =
    cause === 'restart'
      ? ` (process ${shortRunId(restartPending ? epoch.runId : epoch.prevRunId)} → ${shortRunId(restartPending ? facts.runIdNow : epoch.runId)})`
      : '';
  const message =
    restartPending && cause === 'restart'
      ? `restart detected${processes}: the next acquire records it; ${left}`
      : cause
        ? `${CAUSE_LABEL[cause]}${processes}: ${left}`
        : left;
  return { ...base, state: 'quarantined', until, remainingMs: Math.ceil(remaining), cause, restartPending, message };
}

/**
 * Why marking this node clean now could let a second holder in: a restart or a data loss less than
 * maxTtlMs ago (a lock it granted before may still be valid on the other nodes), or no sentinel at
 * all (when the data went is unknown). Null when nothing of the kind is recorded.
 */
export function markCleanWarningOf(epoch: EpochSentinel | null, facts: Omit<ProcessFacts, 'enabled'>): string | null {
  const ceiling = `the lease ceiling (${Math.round(facts.maxTtlMs / 100) / 10} s)`;
  const risk = 'a lock it had granted may still be valid on other nodes, and marking it clean lets a second holder in';
  if (!epoch) return `it has no epoch sentinel: it lost its data, and when is unknown; ${risk}`;
  const events: Array<{ agoMs: number; what: string }> = [];
  if (facts.uptimeMs !== null) events.push({ agoMs: facts.uptimeMs, what: 'its redis-server process started' });
  if (epoch.serverStartedAt !== undefined)
    events.push({ agoMs: facts.nodeNow - epoch.serverStartedAt, what: 'its redis-server process started' });
  if (epoch.origin === 'quarantine' && epoch.cause) {
    const found = (
      {
        'data-loss': 'a data loss was found',
        restart: 'a restart was found',
        replaced: 'its data was replaced by a replication sync',
        eviction: 'evicted keys were found',
        rollback: 'its data was found to have gone back in time',
        'clock-jump': 'its clock was found to have jumped',
      } satisfies Record<QuarantineCause, string>
    )[epoch.cause];
    events.push({ agoMs: facts.nodeNow - epoch.createdAt, what: found });
  }
  const recent = events.filter((e) => e.agoMs < facts.maxTtlMs).sort((a, b) => a.agoMs - b.agoMs)[0];
  if (!recent) return null;
  return `${recent.what} ${Math.max(0, Math.round(recent.agoMs / 1000))} s ago, less than ${ceiling}: ${risk}`;
}
