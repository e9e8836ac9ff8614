import 'server-only';
import type { NodeAction } from '../cluster/actions';
import type { NodeStatus } from '../cluster/supervisor';
import { markNodeClean } from '../redlock/epoch';
import type { Principal } from './auth/principal';
import { actorOf } from './auth/principal';
import { recordAudit } from './audit';
import { HttpError, notFound } from './http/errors';
import { ensureReady } from '../inspect';
import { getRuntime } from './runtime';

function snapshotOf(status: NodeStatus): Record<string, unknown> {
  return { state: status.state, pid: status.pid, persistence: status.persistence, fault: status.fault, restartAt: status.restartAt };
}

/** Run a process or network action on a sandbox node; audited with the node's state before and after. */
export async function runNodeAction(principal: Principal, id: number, action: NodeAction): Promise<{ node: NodeStatus }> {
  const runtime = getRuntime();
  if (!runtime.control) {
    throw new HttpError(409, 'NOT_SANDBOX', runtime.mode === 'external'
      ? 'these are external masters: the console does not own their processes or network, so it will not crash, stop or partition them'
      : 'no masters are configured');
  }
  if (id > runtime.endpoints.length) throw notFound(`there is no node ${id} (nodes are 1…${runtime.endpoints.length})`);
  const before = (await runtime.control.nodes())[id - 1];
  const { actor, role } = actorOf(principal);
  try {
    const node = await runtime.control.act(id, action);
    await recordAudit({ actor, role, action: `node.${action.action}`, target: `node ${id}`, outcome: 'ok',
      before: before ? snapshotOf(before) : null, after: snapshotOf(node), detail: JSON.stringify(action) });
    return { node };
  } catch (err) {
    await recordAudit({ actor, role, action: `node.${action.action}`, target: `node ${id}`, outcome: 'failed',
      before: before ? snapshotOf(before) : null, detail: (err as Error).message });
    throw err;
  }
}

/**
 * End a node's quarantine now: the operator states the node holds no lock that was lost. Safe for
 * a node that was never used or was down longer than maxTtl; otherwise a lock granted with the
 * node's help may still be valid elsewhere, so the answer and the audit entry carry a warning.
 */
export async function markClean(principal: Principal, id: number, reason: string): Promise<{ node: number; markedAt: number; warning: string | null }> {
  const runtime = getRuntime();
  const client = runtime.clients[id - 1];
  if (!client) throw notFound(`there is no node ${id} (nodes are 1…${runtime.endpoints.length})`);
  await ensureReady(client, 1_000).catch(() => {
    throw new HttpError(503, 'NODE_UNREACHABLE', `node ${id} is not reachable; it can be marked clean once it answers`);
  });
  const uptimeSeconds = Number(/uptime_in_seconds:(\d+)/.exec(await client.info('server'))?.[1] ?? Number.POSITIVE_INFINITY);
  const warning = uptimeSeconds * 1000 < runtime.maxTtlMs
    ? `node ${id} restarted ${uptimeSeconds} s ago, less than the lease ceiling (${runtime.maxTtlMs / 1000} s): a lock it had granted may still be valid on other nodes, and marking it clean lets a second holder in`
    : null;
  const sentinel = await markNodeClean(client, { keyPrefix: runtime.keyPrefix, maxTtlMs: runtime.maxTtlMs, origin: `marked clean by ${actorOf(principal).actor}` });
  const { actor, role } = actorOf(principal);
  await recordAudit({ actor, role, action: 'node.mark-clean', target: `node ${id}`, reason, outcome: warning ? 'ok-with-warning' : 'ok',
    after: { quarantineUntil: sentinel.quarantineUntil }, detail: warning ?? '' });
  return { node: id, markedAt: sentinel.createdAt, warning };
}
