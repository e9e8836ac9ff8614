import type { NodeHealth } from './health';
import { driftAllowanceMs, DEFAULT_DRIFT_FACTOR, quorumSize } from './quorum-view';

/** ok: nothing found; warn: works, with a risk to know; unsafe: can break mutual exclusion. */
export type SafetyLevel = 'ok' | 'warn' | 'unsafe';

/** How safe a node's setup is for Redlock, and why. */
export interface SafetyVerdict {
  level: SafetyLevel;
  /** Plain-English reasons, the most serious first; empty when ok. */
  reasons: string[];
}

/** The cluster settings a verdict depends on. */
export interface VerdictOptions {
  /** The cluster's lease ceiling (the quarantine lasts this long). */
  maxTtlMs: number;
  /** @default 0.01 */
  driftFactor?: number;
  /** Does the acquire script quarantine nodes that lost their data? */
  quarantineEnabled: boolean;
}

const RANK: Record<SafetyLevel, number> = { ok: 0, warn: 1, unsafe: 2 };

/** The facts a node's verdict is drawn from (a NodeHealth without its conclusions). */
export type HealthFacts = Omit<NodeHealth, 'verdict' | 'usable'>;

/** The safety verdict for one node: what in its setup can cost a lock its mutual exclusion. */
export function safetyVerdict(facts: HealthFacts, options: VerdictOptions): SafetyVerdict {
  const found: { level: SafetyLevel; reason: string }[] = [];
  const add = (level: SafetyLevel, reason: string) => found.push({ level, reason });
  if (!facts.up) {
    add('warn', `unreachable (${facts.error ?? 'no answer'}): it cannot vote, and its settings cannot be checked`);
    return finish(found);
  }
  if (facts.role !== null && facts.role !== 'master') {
    add('unsafe', `a replica (role ${facts.role}): it refuses lock writes, and a failover can promote it without the latest locks; Redlock needs independent masters`);
  }
  persistenceReasons(facts, options, add);
  const policy = facts.maxmemoryPolicy;
  if (policy === null) add('warn', 'maxmemory-policy cannot be read: cannot verify that held locks are never evicted');
  else if (policy.startsWith('allkeys-')) add('unsafe', `maxmemory-policy ${policy}: ${policy} can evict held locks`);
  else if (policy.startsWith('volatile-')) add('unsafe', `maxmemory-policy ${policy}: ${policy} can evict held locks, since every lock key has a TTL`);
  const allowance = driftAllowanceMs(options.maxTtlMs, options.driftFactor ?? DEFAULT_DRIFT_FACTOR);
  if (facts.clockOffsetMs !== null && Math.abs(facts.clockOffsetMs) > allowance) {
    const side = facts.clockOffsetMs > 0 ? 'ahead of' : 'behind';
    add('warn', `its clock is ${Math.round(Math.abs(facts.clockOffsetMs))} ms ${side} this console, more than the drift allowance (${Math.round(allowance)} ms): a clock that far off may also jump, which shortens leases`);
  }
  if (facts.configReadable === false) {
    add('warn', 'CONFIG is refused (managed Redis?): appendfsync, RDB saves and keyspace notifications cannot be verified');
  }
  return finish(found);
}

function persistenceReasons(facts: HealthFacts, options: VerdictOptions, add: (level: SafetyLevel, reason: string) => void): void {
  const maxTtl = `${Math.round(options.maxTtlMs / 100) / 10} s`;
  switch (facts.persistence?.mode ?? 'unknown') {
    case 'none':
      if (options.quarantineEnabled) add('warn', `persistence none: restarts lose locks; the quarantine keeps it from voting for maxTtl (${maxTtl}) after a restart`);
      else add('unsafe', 'persistence none without quarantine: a restart loses its locks and it votes again at once, so a second client can be granted a lock that is still held');
      break;
    case 'rdb':
      add('unsafe', `RDB snapshots only (save "${facts.persistence?.rdbSaves ?? ''}"): a crash loses the locks written since the last snapshot, and the restored epoch sentinel hides the loss from the quarantine`);
      break;
    case 'aof-everysec':
      add('warn', 'appendfsync everysec: a crash can lose the last second of locks, which the quarantine cannot detect');
      break;
    case 'aof-no':
      add('unsafe', 'appendfsync no: the OS decides when to write, so a crash can lose many seconds of locks, which the quarantine cannot detect');
      break;
    case 'aof':
      add('warn', 'AOF is on but appendfsync cannot be read: cannot verify how much a crash can lose');
      break;
    case 'unknown':
      add('warn', 'persistence cannot be verified: without AOF (appendfsync always) a crash or restart can lose locks');
      break;
    case 'aof-always':
      break;
  }
}

function finish(found: { level: SafetyLevel; reason: string }[]): SafetyVerdict {
  const ordered = [...found].sort((a, b) => RANK[b.level] - RANK[a.level]);
  const level = ordered[0]?.level ?? 'ok';
  return { level, reasons: ordered.map((f) => f.reason) };
}

/** Whether the cluster can grant locks now, and why (not). */
export interface ClusterVerdict {
  /** Can a lock be granted now: are at least a quorum of the configured nodes usable? */
  canGrant: boolean;
  /** Nodes up, masters, and not (about to be) quarantined. */
  usable: number;
  up: number;
  configuredNodes: number;
  quorum: number;
  /** 0 when locks can be granted now; when only quarantines stand in the way, ms until enough have ended; else null. */
  grantableInMs: number | null;
  /** A headline, then why each unusable node is not counted. */
  reasons: string[];
}

/** Can locks be granted now? Counts usable nodes (NodeHealth.usable) against ⌊N/2⌋+1 of `configuredNodes`. */
export function clusterVerdict(healths: readonly NodeHealth[], configuredNodes: number): ClusterVerdict {
  const quorum = quorumSize(configuredNodes);
  const usable = healths.filter((h) => h.usable).length;
  const up = healths.filter((h) => h.up).length;
  const canGrant = usable >= quorum;
  const reasons = [
    `${usable} of ${configuredNodes} nodes usable, quorum ${quorum}: locks ${canGrant ? 'can' : 'cannot'} be granted`,
  ];
  if (healths.length < configuredNodes) reasons.push(`only ${healths.length} of ${configuredNodes} configured nodes were checked`);
  const waits: number[] = [];
  for (const h of healths) {
    if (h.usable) continue;
    if (!h.up) reasons.push(`node ${h.node} is down: ${h.error ?? 'no answer'}`);
    else if (h.role !== null && h.role !== 'master') reasons.push(`node ${h.node} is a replica`);
    else if (h.quarantine?.state === 'quarantined') {
      const left = h.quarantine.remainingMs ?? 0;
      waits.push(left);
      reasons.push(`node ${h.node} is quarantined for another ${(left / 1000).toFixed(1)} s`);
    } else if (h.quarantine?.state === 'unknown') {
      reasons.push(`node ${h.node} has no epoch sentinel: the next acquire will quarantine it for maxTtl`);
    } else reasons.push(`node ${h.node} is not usable`);
  }
  waits.sort((a, b) => a - b);
  const missing = quorum - usable;
  const grantableInMs = canGrant ? 0 : missing <= waits.length ? (waits[missing - 1] ?? null) : null;
  return { canGrant, usable, up, configuredNodes, quorum, grantableInMs, reasons };
}
