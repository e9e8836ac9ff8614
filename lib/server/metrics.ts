import 'server-only';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { OperationEvent, RedlockErrorName } from '@redlock-console/redlock';
import { instanceName } from './instance';

export interface Metrics {
  registry: Registry;
  acquireDuration: Histogram<'outcome'>;
  operations: Counter<'operation' | 'outcome'>;
  forceReleases: Counter<'outcome'>;
  apiKeyQuotaRefusals: Counter<'key' | 'quota'>;
  apiKeyLocksHeld: Gauge<'key'>;
  apiKeyAcquiresWaiting: Gauge<'key'>;
  locks: Gauge<'state'>;
  locksFlagged: Gauge<'flag'>;
  slotLocks: Gauge<'kind'>;
  slotHolders: Gauge<'kind'>;
  oldestLockAge: Gauge;
  nodeUp: Gauge<'node'>;
  nodeRtt: Gauge<'node'>;
  nodeClockOffset: Gauge<'node'>;
  nodeQuarantined: Gauge<'node' | 'reason'>;
  quarantinesStarted: Counter<'node' | 'cause'>;
  nodeQuarantineRemaining: Gauge<'node' | 'reason'>;
  nodeRefused: Gauge<'node' | 'reason'>;
  nodeUnsafe: Gauge<'node'>;
  clusterQuorum: Gauge;
  driftAllowance: Gauge;
  clusterUsable: Gauge;
  clusterCanGrant: Gauge;
  lockListRead: Histogram<'source'>;
  indexRescans: Counter<'node' | 'reason'>;
  indexRereadKeys: Counter<'node'>;
}

/** Prefix of prom-client's default process metrics. */
const DEFAULT_PREFIX = 'redlock_console_';
let made: Metrics | undefined;

/** The server's Prometheus registry (prom-client), one per process. */
export function metrics(): Metrics {
  made ??= createMetrics();
  return made;
}

/** The lock operations redlock_operations_total counts (lock-core.ts). */
export const LOCK_OPERATIONS = ['acquire', 'extend', 'release'] as const;
/** Every outcome of a lock operation: ok, or the lock core's error class (typed: a new class must be listed). */
export const OPERATION_OUTCOMES = [
  'ok',
  ...Object.keys({
    LockContendedError: true,
    QuorumUnavailableError: true,
    LockExpiredError: true,
    InvalidArgumentError: true,
    MaxTtlMismatchError: true,
    SemaphoreLimitMismatchError: true,
  } satisfies Record<RedlockErrorName, true>),
] as readonly string[];
/** How a force-release ended (force-release.ts): every node deleted, some, or none. */
export const FORCE_RELEASE_OUTCOMES = ['ok', 'partial', 'nothing-deleted'] as const;
export type ForceReleaseOutcome = (typeof FORCE_RELEASE_OUTCOMES)[number];

function createMetrics(): Metrics {
  const metrics = registerMetrics();
  // Every label set known in advance present at zero from the start: increase() and rate() see
  // the first event, and a panel reads 0, not "No data" (docs/operations.md "Counters from zero").
  for (const operation of LOCK_OPERATIONS) for (const outcome of OPERATION_OUTCOMES) metrics.operations.inc({ operation, outcome }, 0);
  for (const outcome of OPERATION_OUTCOMES) metrics.acquireDuration.zero({ outcome });
  for (const outcome of FORCE_RELEASE_OUTCOMES) metrics.forceReleases.inc({ outcome }, 0);
  return metrics;
}

/** Semaphores and read-write locks by kind, and their holders on a quorum (lib/server/slot-inspect-service.ts). */
function slotGauges(registry: Registry): Pick<Metrics, 'slotLocks' | 'slotHolders'> {
  return {
    slotLocks: new Gauge({
      name: 'redlock_slot_locks',
      help: 'Semaphores (kind="semaphore") and read-write locks (kind="rwlock") with a key on some master, in the latest listing',
      labelNames: ['kind'],
      registers: [registry],
    }),
    slotHolders: new Gauge({
      name: 'redlock_slot_holders',
      help: 'Permits (kind="semaphore"), readers and writers (kind="rwlock") held on a quorum of the masters, in the latest listing; waiting writers not counted',
      labelNames: ['kind'],
      registers: [registry],
    }),
  };
}

function registerMetrics(): Metrics {
  const registry = new Registry();
  // Every series names the console process it came from (REDLOCK_INSTANCE): with several consoles
  // on one set of masters, the dashboard and the alerts aggregate over it (max for the masters'
  // state every console sees alike, sum for each console's own work). Not `instance`: Prometheus
  // sets that target label itself, and a scraped one would be renamed `exported_instance`.
  registry.setDefaultLabels({ replica: instanceName() });
  collectDefaultMetrics({ register: registry, prefix: DEFAULT_PREFIX });
  // Gauges named like counters break the exposition format's naming rule (promtool: "non-counter
  // metrics should not have _total suffix"); each is the sum of its labelled twin, which stays.
  for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) {
    registry.removeSingleMetric(DEFAULT_PREFIX + name);
  }
  return {
    registry,
    acquireDuration: new Histogram({
      name: 'redlock_acquire_duration_seconds',
      help: 'Time to acquire a lock through the console, all attempts included',
      labelNames: ['outcome'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    operations: new Counter({
      name: 'redlock_operations_total',
      help: 'Lock operations through the console',
      labelNames: ['operation', 'outcome'],
      registers: [registry],
    }),
    forceReleases: new Counter({
      name: 'redlock_force_releases_total',
      help: 'Operator force-releases',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    apiKeyQuotaRefusals: new Counter({
      name: 'redlock_api_key_quota_refusals_total',
      help: "Acquires an API key's quota refused (429), by quota: locks-held, acquire-rate, waiting",
      labelNames: ['key', 'quota'],
      registers: [registry],
    }),
    apiKeyLocksHeld: new Gauge({
      name: 'redlock_api_key_locks_held',
      help: 'Resources held by each API key through this console process, against its locks-held quota',
      labelNames: ['key'],
      registers: [registry],
    }),
    apiKeyAcquiresWaiting: new Gauge({
      name: 'redlock_api_key_acquires_waiting',
      help: 'Acquires with waitMs waiting now, by API key, against its waiting quota',
      labelNames: ['key'],
      registers: [registry],
    }),
    locks: new Gauge({
      name: 'redlock_locks',
      help: 'Locks by state in the latest snapshot',
      labelNames: ['state'],
      registers: [registry],
    }),
    locksFlagged: new Gauge({
      name: 'redlock_locks_flagged',
      help: 'Locks whatever their state with a key above the lease ceiling (flag="over_ceiling") or without a TTL (flag="no_ttl"), in the latest snapshot',
      labelNames: ['flag'],
      registers: [registry],
    }),
    ...slotGauges(registry),
    oldestLockAge: new Gauge({
      name: 'redlock_lock_oldest_age_seconds',
      help: "Age of the oldest held or expiring lock, from its holder metadata's acquiredAt (extensions keep it); 0 when no such lock has metadata",
      registers: [registry],
    }),
    nodeUp: new Gauge({ name: 'redlock_node_up', help: '1 when the node answers', labelNames: ['node'], registers: [registry] }),
    nodeRtt: new Gauge({ name: 'redlock_node_rtt_seconds', help: 'PING round trip', labelNames: ['node'], registers: [registry] }),
    nodeClockOffset: new Gauge({
      name: 'redlock_node_clock_offset_seconds',
      help: 'Node clock minus console clock, RTT-corrected',
      labelNames: ['node'],
      registers: [registry],
    }),
    nodeQuarantined: new Gauge({
      name: 'redlock_node_quarantined',
      help: '1 while the node votes against after a restart, a data loss, evictions, a rollback or a clock jump; reason: restart, data-loss, replaced, eviction, rollback, clock-jump, no-sentinel (its data is gone and the next acquire starts the quarantine), unknown; none when it votes',
      labelNames: ['node', 'reason'],
      registers: [registry],
    }),
    quarantinesStarted: new Counter({
      name: 'redlock_quarantines_started_total',
      help: "Quarantines the console's lock core started on a node, by cause (data-loss, restart, replaced, eviction, rollback: its data went back in time inside one process, clock-jump: its clock moved beyond the drift allowance)",
      labelNames: ['node', 'cause'],
      registers: [registry],
    }),
    nodeQuarantineRemaining: new Gauge({
      name: 'redlock_node_quarantine_remaining_seconds',
      help: "Seconds until the node votes again, on the node's clock (0 when it is not quarantined; the whole lease ceiling for no-sentinel); reason as redlock_node_quarantined",
      labelNames: ['node', 'reason'],
      registers: [registry],
    }),
    nodeRefused: new Gauge({
      name: 'redlock_node_refused',
      help: 'Votes the lock core refuses whatever the quarantine, by reason: unsafe-eviction (an evicting maxmemory-policy) or ceiling-mismatch (another lease ceiling recorded); 0 for each when accepted',
      labelNames: ['node', 'reason'],
      registers: [registry],
    }),
    nodeUnsafe: new Gauge({
      name: 'redlock_node_unsafe',
      help: "1 when the node's setup breaks an assumption (persistence, eviction policy, role, lease ceiling)",
      labelNames: ['node'],
      registers: [registry],
    }),
    clusterQuorum: new Gauge({
      name: 'redlock_cluster_quorum',
      help: 'Votes a lock needs: a majority of the configured masters',
      registers: [registry],
    }),
    driftAllowance: new Gauge({
      name: 'redlock_drift_allowance_seconds',
      help: 'Clock drift the lock core subtracts from a lease at the ceiling (maxTtlMs x driftFactor + 2 ms)',
      registers: [registry],
    }),
    clusterUsable: new Gauge({
      name: 'redlock_cluster_usable_nodes',
      help: 'Masters whose vote can count now (up, a master, not quarantined, not refused)',
      registers: [registry],
    }),
    clusterCanGrant: new Gauge({
      name: 'redlock_cluster_can_grant',
      help: '1 when a quorum of usable masters can grant a lock now',
      registers: [registry],
    }),
    lockListRead: new Histogram({
      name: 'redlock_lock_list_read_seconds',
      help: 'Time to read every node for the lock list: source="index" when the live lock index caught up, "scan" when a node was scanned in full',
      labelNames: ['source'],
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    indexRescans: new Counter({
      name: 'redlock_lock_index_rescans_total',
      help: 'Nodes the live lock index scanned in full, by reason (first-build, events-lost, keys-replaced…)',
      labelNames: ['node', 'reason'],
      registers: [registry],
    }),
    indexRereadKeys: new Counter({
      name: 'redlock_lock_index_reread_keys_total',
      help: 'Lock keys the live lock index read again because their node reported a change',
      labelNames: ['node'],
      registers: [registry],
    }),
  };
}

/** The refusal reasons redlock_node_refused has a series for (lib/api/nodes.ts refusalSchema). */
export const REFUSAL_REASONS = ['unsafe-eviction', 'ceiling-mismatch'] as const;

/** The few fields of a lock view the oldest-age gauge reads. */
interface AgedLock {
  state: string;
  meta: Record<string, string> | null;
}

/**
 * Milliseconds since the oldest held or expiring lock was acquired (its holder metadata's
 * `acquiredAt`, the acquiring client's wall clock; an extension keeps it), or 0 when no such lock
 * carries one (a bare token of another library has none). `locks` yields only what is asked for.
 */
export function oldestLockAgeMs(locks: Iterable<AgedLock>, now: number): number {
  let oldest = Infinity;
  for (const lock of locks) {
    if (lock.state !== 'held' && lock.state !== 'expiring') continue;
    const at = Number(lock.meta?.acquiredAt);
    if (Number.isFinite(at) && at > 0 && at < oldest) oldest = at;
  }
  return oldest === Infinity ? 0 : Math.max(0, now - oldest);
}

/** Outcome label of a lock operation: ok, or the error's class. */
export function outcomeOf(event: OperationEvent): string {
  return event.ok ? 'ok' : (event.error?.name ?? 'error');
}
