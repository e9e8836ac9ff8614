import type { NodeHealth } from './health';
import { CAUSE_LABEL } from './quarantine';
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
  /**
   * Does the lock core quarantine nodes that lost their data or restarted, and refuse the votes of
   * evicting nodes and of nodes recording another ceiling (its defaults: quarantine and nodeChecks on)?
   */
  quarantineEnabled: boolean;
}

/** A vote the lock core refuses whatever the node's quarantine, with the reason it gives (the core's votes.ts). */
export interface Refusal {
  reason: 'unsafe-eviction' | 'ceiling-mismatch';
  message: string;
}

const RANK: Record<SafetyLevel, number> = { ok: 0, warn: 1, unsafe: 2 };

/** The facts a node's verdict is drawn from (a NodeHealth without its conclusions). */
export type HealthFacts = Omit<NodeHealth, 'verdict' | 'usable' | 'refusal'>;

/**
 * Would the lock core refuse this node's grants whatever its quarantine? In the core's order: a
 * recorded lease ceiling other than ours (ceiling-mismatch), then any maxmemory-policy but
 * noeviction (unsafe-eviction). Null with the quarantine off (the core checks neither then).
 */
export function refusalOf(facts: HealthFacts, options: VerdictOptions): Refusal | null {
  if (!options.quarantineEnabled || !facts.up) return null;
  const recorded = facts.quarantine?.recordedMaxTtlMs ?? null;
  if (recorded !== null && recorded !== options.maxTtlMs) {
    return {
      reason: 'ceiling-mismatch',
      message: `it records the lease ceiling maxTtlMs ${recorded}, this console uses ${options.maxTtlMs}: the lock core refuses its votes (ceiling-mismatch), since a shorter quarantine than a lease lets a second holder in`,
    };
  }
  const policy = facts.maxmemoryPolicy;
  if (policy !== null && policy !== 'noeviction') {
    return {
      reason: 'unsafe-eviction',
      message: `maxmemory-policy ${policy} can evict held locks, the epoch sentinel or the fence register: the lock core refuses its votes (unsafe-eviction) until it is noeviction`,
    };
  }
  return null;
}

/** The safety verdict for one node: what in its setup can cost a lock its mutual exclusion. */
export function safetyVerdict(facts: HealthFacts, options: VerdictOptions): SafetyVerdict {
  const found: { level: SafetyLevel; reason: string }[] = [];
  const add = (level: SafetyLevel, reason: string) => found.push({ level, reason });
  if (!facts.up) {
    add('warn', `unreachable (${facts.error ?? 'no answer'}): it cannot vote, and its settings cannot be checked`);
    return finish(found);
  }
  if (facts.role !== null && facts.role !== 'master') {
    add(
      'unsafe',
      `a replica (role ${facts.role}): it refuses lock writes, and a failover can promote it without the latest locks; Redlock needs independent masters`,
    );
  }
  persistenceReasons(facts, options, add);
  const policy = facts.maxmemoryPolicy;
  if (policy === null) add('warn', 'maxmemory-policy cannot be read: cannot verify that held locks are never evicted');
  else if (policy !== 'noeviction') {
    const what = policy.startsWith('volatile-')
      ? 'held locks (every lock key has a TTL)'
      : 'held locks, the epoch sentinel or the fence register';
    add(
      'unsafe',
      options.quarantineEnabled
        ? `maxmemory-policy ${policy} can evict ${what}: the lock core refuses its votes (unsafe-eviction) until it is noeviction`
        : `maxmemory-policy ${policy} can evict ${what}, and with the quarantine off its votes still count`,
    );
  }
  const refusal = refusalOf(facts, options);
  if (refusal?.reason === 'ceiling-mismatch') add('unsafe', refusal.message);
  const allowance = driftAllowanceMs(options.maxTtlMs, options.driftFactor ?? DEFAULT_DRIFT_FACTOR);
  if (facts.clockOffsetMs !== null && Math.abs(facts.clockOffsetMs) > allowance) {
    const side = facts.clockOffsetMs > 0 ? 'ahead of' : 'behind';
    add(
      'warn',
      `its clock is ${Math.round(Math.abs(facts.clockOffsetMs))} ms ${side} this console, more than the drift allowance (${Math.round(allowance)} ms): a clock that far off may also jump, which shortens leases`,
    );
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
      if (options.quarantineEnabled)
        add('warn', `persistence none: restarts lose locks; the quarantine keeps it from voting for maxTtl (${maxTtl}) after a restart`);
      else
        add(
          'unsafe',
          'persistence none without quarantine: a restart loses its locks and it votes again at once, so a second client can be granted a lock that is still held',
        );
      break;
    case 'rdb':
      if (options.quarantineEnabled) {
        add(
          'warn',
          `RDB snapshots only (save "${facts.persistence?.rdbSaves ?? ''}"): a crash brings back the last snapshot; restart detection keeps it from voting for maxTtl (${maxTtl}) after every restart`,
        );
      } else {
        add(
          'unsafe',
          `RDB snapshots only (save "${facts.persistence?.rdbSaves ?? ''}"): a crash loses the locks written since the last snapshot, and without the quarantine the restored epoch sentinel hides the loss`,
        );
      }
      break;
    case 'aof-everysec':
      add(
        'warn',
        options.quarantineEnabled
          ? `appendfsync everysec: a crash can lose the last second of locks; restart detection keeps it from voting for maxTtl (${maxTtl}) after the restart`
          : 'appendfsync everysec: a crash can lose the last second of locks, and without the quarantine it votes again at once',
      );
      break;
    case 'aof-no':
      if (options.quarantineEnabled)
        add(
          'warn',
          `appendfsync no: a machine crash can lose many seconds of locks; restart detection keeps it from voting for maxTtl (${maxTtl}) after the restart`,
        );
      else
        add(
          'unsafe',
          'appendfsync no: the OS decides when to write, so a crash can lose many seconds of locks, and without the quarantine it votes again at once',
        );
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
  const reasons = [`${usable} of ${configuredNodes} nodes usable, quorum ${quorum}: locks ${canGrant ? 'can' : 'cannot'} be granted`];
  if (healths.length < configuredNodes) reasons.push(`only ${healths.length} of ${configuredNodes} configured nodes were checked`);
  const waits: number[] = [];
  for (const h of healths) {
    if (h.usable) continue;
    if (!h.up) reasons.push(`node ${h.node} is down: ${h.error ?? 'no answer'}`);
    else if (h.role !== null && h.role !== 'master') reasons.push(`node ${h.node} is a replica`);
    else if (h.refusal) reasons.push(`node ${h.node} votes against (${h.refusal.reason}): ${h.refusal.message}`);
    else if (h.quarantine?.state === 'quarantined') {
      const left = h.quarantine.remainingMs ?? 0;
      waits.push(left);
      const cause = h.quarantine.cause ? ` (${CAUSE_LABEL[h.quarantine.cause]})` : '';
      reasons.push(`node ${h.node} is quarantined for another ${(left / 1000).toFixed(1)} s${cause}`);
    } else if (h.quarantine?.state === 'unknown') {
      reasons.push(`node ${h.node} has no epoch sentinel: the next acquire will quarantine it for maxTtl`);
    } else reasons.push(`node ${h.node} is not usable`);
  }
  waits.sort((a, b) => a - b);
  const missing = quorum - usable;
  const grantableInMs = canGrant ? 0 : missing <= waits.length ? (waits[missing - 1] ?? null) : null;
  return { canGrant, usable, up, configuredNodes, quorum, grantableInMs, reasons };
}
