import type { NodeActionName } from '@/lib/api/node-actions';
import type { NodesResponse, NodeView } from '@/lib/api/nodes';
import { exhaustive } from '@/lib/exhaustive';

export type Tone = 'ok' | 'warn' | 'bad' | 'neutral';

/**
 * The cluster's tone, the same on every screen (the overview banner, the Nodes header): green only
 * when every node votes with a spare; amber while locks can still be granted (or soon will be, a
 * quarantine running out); red when they cannot.
 */
export function clusterTone(verdict: NodesResponse['verdict']): Tone {
  const spare = verdict.usable - verdict.quorum;
  const waiting = !verdict.canGrant && verdict.grantableInMs !== null && verdict.grantableInMs > 0;
  if (verdict.canGrant) return spare >= 1 && verdict.usable === verdict.configuredNodes ? 'ok' : 'warn';
  return waiting ? 'warn' : 'bad';
}

export interface NodeStateInfo {
  /** One word, stable for tests and styling: up, slow, starting, paused, partitioned, resetting, stopping, down. */
  key: 'up' | 'slow' | 'starting' | 'paused' | 'partitioned' | 'resetting' | 'stopping' | 'down';
  label: string;
  tone: Tone;
  /** What the state means for the node's vote, in plain words. */
  detail: string;
}

/**
 * What a node is doing, from the console's reading (`up`) and, in the sandbox, the supervisor's
 * process state and the fault proxy's mode. Faults the operator injected are named as such, so a
 * partitioned node is not mistaken for a crashed one.
 */
export function nodeState(node: NodeView): NodeStateInfo {
  if (node.process === 'paused') {
    return {
      key: 'paused',
      label: 'paused',
      tone: 'bad',
      detail: 'process paused (SIGSTOP): it keeps its keys but answers nobody, so it cannot vote',
    };
  }
  if (node.fault === 'blackhole') {
    return {
      key: 'partitioned',
      label: 'partitioned',
      tone: 'bad',
      detail: 'its network is cut (the fault proxy drops every packet): the process runs, but no client reaches it',
    };
  }
  if (node.fault === 'reset') {
    return {
      key: 'resetting',
      label: 'resetting',
      tone: 'bad',
      detail: 'the fault proxy resets every connection: no client can talk to it',
    };
  }
  // The supervisor knows a process it killed is gone before a client notices the dead connection:
  // in the sandbox its word settles "down" (the console's own reading may still be in flight).
  if (node.process === 'down')
    return { key: 'down', label: 'down', tone: 'bad', detail: node.error ?? 'the redis-server process is not running' };
  if (node.process === 'stopping') return { key: 'stopping', label: 'stopping', tone: 'bad', detail: 'the process is shutting down' };
  if (!node.up) {
    if (node.process === 'starting') return { key: 'starting', label: 'starting', tone: 'warn', detail: 'the process is starting' };
    return { key: 'down', label: 'down', tone: 'bad', detail: node.error ?? 'no answer' };
  }
  if (node.fault === 'latency') {
    return { key: 'slow', label: 'slow', tone: 'warn', detail: `added latency: ${node.faultDetail ?? 'latency'}; its votes may time out` };
  }
  return { key: 'up', label: 'up', tone: 'ok', detail: 'answering through the same path lock clients use' };
}

export interface VoteInfo {
  key: 'votes' | 'quarantined' | 'refused' | 'unknown' | 'replica' | 'absent';
  label: string;
  tone: Tone;
  detail: string;
}

/** Can this node's vote count in an acquire right now? */
export function voteState(node: NodeView): VoteInfo {
  if (!node.up || node.process === 'down' || node.process === 'stopping') {
    return { key: 'absent', label: 'cannot vote', tone: 'bad', detail: 'unreachable: it votes against every acquire' };
  }
  if (node.role !== null && node.role !== 'master')
    return { key: 'replica', label: 'replica', tone: 'bad', detail: `role ${node.role}: refuses lock writes` };
  // The lock core votes against it whatever its quarantine: say so first, it does not end by itself.
  if (node.refusal)
    return { key: 'refused', label: 'votes against', tone: 'bad', detail: `${node.refusal.reason}: ${node.refusal.message}` };
  const q = node.quarantine;
  if (q?.state === 'quarantined') return { key: 'quarantined', label: 'quarantined', tone: 'warn', detail: q.message };
  if (q?.state === 'unknown') {
    return {
      key: 'unknown',
      label: 'no epoch',
      tone: 'warn',
      detail: 'no epoch sentinel: the next acquire will quarantine it for the lease ceiling',
    };
  }
  if (node.usable) return { key: 'votes', label: 'votes', tone: 'ok', detail: q?.message ?? 'clean: its vote counts' };
  return { key: 'absent', label: 'not usable', tone: 'warn', detail: 'its vote does not count' };
}

/** Why a quarantined node sits out, in a few words, and what it lets us tell about it. */
export interface QuarantineWhy {
  /** 'restart detected', 'data loss', 'keys evicted', or 'quarantined' when the sentinel does not say. */
  label: string;
  /** e.g. 'process a1b2c3d4 → e5f6a7b8' for a restart. */
  detail: string;
  /** More, when there is: a restart not yet recorded by any client. */
  note: string | null;
}

const short = (runId: string | null) => (runId ? runId.slice(0, 8) : '?');

/** Why the node is quarantined (from the sentinel's cause), or null when it is not. */
export function quarantineWhy(node: NodeView): QuarantineWhy | null {
  const q = node.quarantine;
  if (q?.state !== 'quarantined') return null;
  switch (q.cause) {
    case 'restart': {
      // Not recorded yet: the sentinel still names the old process, the node answers with the new one.
      const from = q.restartPending ? q.runId : q.prevRunId;
      const to = q.restartPending ? node.runId : q.runId;
      return {
        label: 'restart detected',
        detail: `process ${short(from)} → ${short(to)}`,
        note: q.restartPending ? 'recorded at the next acquire' : null,
      };
    }
    case 'data-loss':
      return { label: 'data loss', detail: 'its epoch sentinel was gone: so may every lock be', note: null };
    case 'eviction':
      return { label: 'keys evicted', detail: 'evicted_keys grew: a lock key may be gone', note: null };
    case 'replaced':
      return { label: 'data replaced', detail: 'a replication sync replaced its dataset', note: null };
    case 'rollback':
      return {
        label: 'data went back in time',
        detail: 'its dataset was replaced within one process (a restore in place, DEBUG RELOAD, SWAPDB, RESTORE)',
        note: null,
      };
    case 'clock-jump':
      return { label: 'clock jumped', detail: 'its wall clock moved beyond the drift allowance: keys may have expired early', note: null };
    case null:
      return { label: 'quarantined', detail: q.origin ?? '', note: null };
    default:
      return exhaustive(q.cause, 'quarantine cause');
  }
}

const PERSISTENCE_LABEL: Record<string, { label: string; tone: Tone }> = {
  none: { label: 'none', tone: 'warn' },
  // Restart detection makes a crashed RDB node sit out maxTtl: a cost in votes, no longer a silent loss.
  rdb: { label: 'RDB snapshots', tone: 'warn' },
  'aof-always': { label: 'AOF always', tone: 'ok' },
  'aof-everysec': { label: 'AOF everysec', tone: 'warn' },
  'aof-no': { label: 'AOF, no fsync', tone: 'warn' },
  aof: { label: 'AOF (fsync ?)', tone: 'warn' },
  unknown: { label: 'unknown', tone: 'warn' },
};

export function persistenceInfo(mode: string | null): { label: string; tone: Tone } {
  if (mode === null) return { label: '—', tone: 'neutral' };
  return PERSISTENCE_LABEL[mode] ?? { label: mode, tone: 'neutral' };
}

export function evictionTone(policy: string | null): Tone {
  if (policy === null) return 'neutral';
  if (policy === 'noeviction') return 'ok';
  return policy.startsWith('allkeys-') || policy.startsWith('volatile-') ? 'bad' : 'neutral';
}

export const VERDICT_LABEL = { ok: 'safe', warn: 'warning', unsafe: 'unsafe' } as const;
export const VERDICT_TONE = { ok: 'ok', warn: 'warn', unsafe: 'bad' } as const satisfies Record<string, Tone>;

/** "+0.4 ms", "−12 ms" (the node's clock minus this console's). */
export function formatOffset(ms: number | null): string {
  if (ms === null || !Number.isFinite(ms)) return '—';
  const sign = ms > 0 ? '+' : ms < 0 ? '−' : '±';
  const abs = Math.abs(ms);
  return `${sign}${abs < 10 ? abs.toFixed(1) : Math.round(abs)} ms`;
}

/** "0.31 ms", "12 ms". */
export function formatRtt(ms: number | null): string {
  if (ms === null || !Number.isFinite(ms)) return '—';
  if (ms < 1) return `${ms.toFixed(2)} ms`;
  if (ms < 10) return `${ms.toFixed(1)} ms`;
  return `${Math.round(ms)} ms`;
}

/** Process-level actions need the supervisor; network actions need the fault proxy. */
export function canAct(node: NodeView): Record<NodeActionName, boolean> {
  const process = node.process;
  const running = process === 'up' || process === 'starting';
  return {
    crash: running || process === 'paused',
    stop: running || process === 'paused',
    start: process === 'down' && node.restartAt === null,
    restart: process !== null && process !== 'stopping',
    pause: process === 'up',
    resume: process === 'paused',
    partition: node.fault !== null && node.fault !== 'blackhole',
    heal: node.fault !== null && node.fault !== 'pass',
    latency: node.fault !== null && node.fault !== 'blackhole',
    reset: node.fault !== null && node.fault !== 'reset',
  };
}
