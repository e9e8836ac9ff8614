import 'server-only';
import type { NodeView, NodesResponse } from '../api/nodes';
import type { NodeStatus } from '../cluster/supervisor';
import { formatFaultMode } from '../faults';
import { clusterHealth, clusterVerdict, driftAllowanceMs } from '../inspect';
import { recordSample } from './history';
import { metrics, REFUSAL_REASONS } from './metrics';
import { supervisorDriver } from './node-actions-service';
import { getRuntime } from './runtime';
import { nodeNumber } from '../node-number';

const EMPTY_VERDICT = {
  canGrant: false,
  usable: 0,
  up: 0,
  configuredNodes: 0,
  quorum: 0,
  grantableInMs: null,
  reasons: ['no masters configured'],
};

/** Every master's health as the console's clients see it, merged with the supervisor's view in the sandbox. */
export async function listNodes(): Promise<NodesResponse> {
  const runtime = getRuntime();
  const readAt = Date.now();
  if (runtime.mode === 'unconfigured') {
    return {
      mode: 'unconfigured',
      actionsBy: null,
      readAt,
      quorum: 0,
      maxTtlMs: runtime.maxTtlMs,
      verdict: EMPTY_VERDICT,
      nodes: [],
      problem: runtime.problem,
    };
  }
  const [statuses, healths, actionsBy] = await Promise.all([
    runtime.control?.nodes().catch(() => null) ?? Promise.resolve(null),
    clusterHealth(runtime.clients, {
      keyPrefix: runtime.keyPrefix,
      maxTtlMs: runtime.maxTtlMs,
      quarantineEnabled: true,
      driftFactor: runtime.driftFactor,
    }),
    supervisorDriver(),
  ]);
  const nodes: NodeView[] = runtime.endpoints.map((endpoint, i) => {
    const status: NodeStatus | undefined = statuses?.[i];
    const h = healths[i]!;
    return {
      id: nodeNumber(i),
      label: endpoint.label,
      port: endpoint.port,
      up: h.up,
      usable: h.usable,
      process: status?.state ?? null,
      rttMs: h.rttMs === null ? null : Math.round(h.rttMs * 100) / 100,
      clockOffsetMs: h.clockOffsetMs === null ? null : Math.round(h.clockOffsetMs * 10) / 10,
      version: h.version,
      runId: h.runId,
      role: h.role,
      persistence: h.persistence?.mode ?? status?.persistence ?? null,
      maxmemoryPolicy: h.maxmemoryPolicy,
      notifyKeyspaceEvents: h.notifyKeyspaceEvents,
      uptimeMs: h.uptimeMs,
      quarantine: h.quarantine,
      refusal: h.refusal,
      verdict: h.verdict,
      fault: status?.fault?.kind ?? null,
      faultDetail: status?.fault && status.fault.kind !== 'pass' ? formatFaultMode(status.fault) : null,
      restartAt: status?.restartAt ?? null,
      resumable: status?.resumable ?? null,
      error: h.error,
      checkedAt: h.checkedAt,
    };
  });
  const verdict = clusterVerdict(healths, runtime.endpoints.length);
  const m = metrics();
  // One quarantine series per node, labelled with its reason now: drop the last read's first.
  m.nodeQuarantined.reset();
  m.nodeQuarantineRemaining.reset();
  for (const n of nodes) {
    const node = String(n.id);
    m.nodeUp.set({ node }, n.up ? 1 : 0);
    if (n.rttMs !== null) m.nodeRtt.set({ node }, n.rttMs / 1000);
    if (n.clockOffsetMs !== null) m.nodeClockOffset.set({ node }, n.clockOffsetMs / 1000);
    // No epoch sentinel (its data is gone): it votes against now and the next acquire quarantines
    // it for a whole maxTtlMs, so it counts as quarantined with at least that long to go.
    const q = n.quarantine;
    const quarantined = q?.state === 'quarantined' || q?.state === 'unknown';
    const reason = !quarantined ? 'none' : q.state === 'unknown' ? 'no-sentinel' : (q.cause ?? 'unknown');
    const remainingMs = !quarantined ? 0 : q.state === 'unknown' ? runtime.maxTtlMs : (q.remainingMs ?? 0);
    m.nodeQuarantined.set({ node, reason }, quarantined ? 1 : 0);
    m.nodeQuarantineRemaining.set({ node, reason }, remainingMs / 1000);
    for (const why of REFUSAL_REASONS) m.nodeRefused.set({ node, reason: why }, n.refusal?.reason === why ? 1 : 0);
    m.nodeUnsafe.set({ node }, n.verdict.level === 'unsafe' ? 1 : 0);
  }
  m.driftAllowance.set(driftAllowanceMs(runtime.maxTtlMs, runtime.driftFactor) / 1000);
  m.clusterQuorum.set(verdict.quorum);
  m.clusterUsable.set(verdict.usable);
  m.clusterCanGrant.set(verdict.canGrant ? 1 : 0);
  recordSample({ kind: 'nodes', rttMs: nodes.map((n) => n.rttMs) });
  return { mode: runtime.mode, actionsBy, readAt, quorum: verdict.quorum, maxTtlMs: runtime.maxTtlMs, verdict, nodes, problem: null };
}
