import 'server-only';
import { QUARANTINE_CAUSES, Redlock } from '@redlock-console/redlock';
import { CAUSE_LABEL } from '../inspect/quarantine';
import { publishEvent } from './events';
import { logger } from './logger';
import { metrics, outcomeOf } from './metrics';
import { recordSample } from './history';
import { getRuntime } from './runtime';

let core: { redlock: Redlock; ready: Promise<void> } | undefined;

/**
 * The lock core as the console's lock service uses it: its own connections to the masters (through
 * the fault proxies in the sandbox), the cluster's key prefix and lease ceiling, quarantine on,
 * writes coalesced per event-loop turn.
 * Its outcome events feed the Prometheus metrics and the rolling history behind the charts.
 */
export function lockCore(): Redlock {
  if (core) return core.redlock;
  const runtime = getRuntime();
  const redlock = new Redlock(
    runtime.endpoints.map((e) => e.url),
    {
      keyPrefix: runtime.keyPrefix,
      maxTtlMs: runtime.maxTtlMs,
      nodeTimeoutMs: runtime.nodeTimeoutMs,
      driftFactor: runtime.driftFactor,
      // A server: requests arrive on many connections, each read in its own callback. Writing at
      // the end of the I/O phase sends one write per node per event-loop turn, not one per request
      // (1.8x the HTTP lock service's pairs/s at 32 clients; settings.ts argues it is timing only).
      writeCoalescing: 'io',
    },
  );
  const m = metrics();
  redlock.on('acquire', (event) => {
    m.acquireDuration.observe({ outcome: outcomeOf(event) }, event.durationMs / 1000);
    m.operations.inc({ operation: 'acquire', outcome: outcomeOf(event) });
    recordSample({ kind: 'acquire', ok: event.ok, durationMs: event.durationMs, outcome: outcomeOf(event) });
  });
  redlock.on('extend', (event) => m.operations.inc({ operation: 'extend', outcome: outcomeOf(event) }));
  redlock.on('release', (event) => m.operations.inc({ operation: 'release', outcome: outcomeOf(event) }));
  // Every node and cause present at zero, so that an alert on an increase sees the first one.
  for (let node = 1; node <= redlock.nodeCount; node++)
    for (const cause of QUARANTINE_CAUSES) m.quarantinesStarted.inc({ node: String(node), cause }, 0);
  redlock.on('quarantine', (event) => {
    if (!event.discovered) return;
    m.quarantinesStarted.inc({ node: String(event.node), cause: event.cause ?? 'unknown' });
    publishEvent({
      type: 'node.quarantined',
      node: event.node,
      detail: `${event.cause ? `${CAUSE_LABEL[event.cause]}: ` : ''}until ${new Date(event.until).toISOString()}`,
      source: 'service',
    });
  });
  redlock.on('node-error', (event) => logger().debug({ node: event.node, err: event.error.message }, 'lock core node error'));
  core = { redlock, ready: redlock.connect() };
  return redlock;
}

/** The lock core once its connections are up (bounded): a first request after a start must not
 * spend its per-node deadline on connection setup. */
export async function readyLockCore(): Promise<Redlock> {
  const redlock = lockCore();
  await core?.ready;
  return redlock;
}
