import 'server-only';
import type { Redis } from 'ioredis';
import type { NodeAction } from '../api/node-actions';
import type { ActionsBy } from '../api/nodes';
import type { NodeStatus } from '../cluster/supervisor';
import type { SeenSentinel } from '@redlock-console/redlock';
import { markNodeClean, parseEpoch, SentinelChangedError } from '@redlock-console/redlock';
import { epochKey } from '@redlock-console/redlock';
import type { Principal } from './auth/principal';
import { actorOf } from './auth/principal';
import { recordAudit } from './audit';
import { HttpError, notFound } from './http/errors';
import { ensureReady, parseInfo } from '../inspect';
import { CAUSE_LABEL, markCleanWarningOf, shortRunId } from '../inspect/quarantine';
import { getRuntime } from './runtime';
import { atNode } from '../node-number';
import { leaseHolder, takeLease, type HeldLease, type LeaseHolder } from './console-lease';
import { instanceName } from './instance';

/** What an audit entry keeps of a node before and after an action (also for the actions a scenario takes). */
export function snapshotOf(status: NodeStatus): Record<string, unknown> {
  return { state: status.state, pid: status.pid, persistence: status.persistence, fault: status.fault, restartAt: status.restartAt };
}

/** A node's status as the browser may see it: without its URLs (they carry the sandbox's password) or its data directory. */
export type PublicNodeStatus = Omit<NodeStatus, 'url' | 'directUrl' | 'dataDir'>;

function publicStatus(status: NodeStatus): PublicNodeStatus {
  const { url: _url, directUrl: _directUrl, dataDir: _dataDir, ...rest } = status;
  return rest;
}

let ownership: Promise<HeldLease | LeaseHolder | null> | undefined;

/**
 * The sandbox supervisor is driven by one console at a time (the `sandbox-supervisor` lease,
 * console-lease.ts): the first console that acts on a node takes it and keeps it while it runs
 * (renewed; it passes on LEASE_TTL_MS after that console stops). Two consoles acting on one
 * supervisor would each audit and reason about node states the other changed under it.
 * Resolves to this console's lease, or the other owner, or null (no majority answered).
 */
function supervisorOwnership(): Promise<HeldLease | LeaseHolder | null> {
  const pending = (ownership ??= takeLease('sandbox-supervisor', 'drives the sandbox supervisor (node actions)', () => {
    // Lost (the masters out of reach past the TTL, or taken over): ask again at the next action.
    ownership = undefined;
  }).then((taken) => ('held' in taken ? taken.held : taken.holder)));
  // Another owner, or no answer: asked again next time (it may have stopped).
  void pending.then((r) => {
    if (r === null || 'instance' in r) ownership = undefined;
  });
  return pending;
}

/**
 * Who drives the supervisor now, as a majority of the masters say, for the Nodes screen (null: no
 * console yet, no majority answered, or no supervisor here). Read, never taken: only an action takes it.
 */
export async function supervisorDriver(): Promise<ActionsBy | null> {
  if (!getRuntime().control) return null;
  const holder = await leaseHolder('sandbox-supervisor').catch(() => null);
  return holder ? { ...holder, self: holder.instance === instanceName() } : null;
}

/** The 409 of a console that does not drive the supervisor, naming the one that does. */
function notTheOwner(owner: LeaseHolder | null): HttpError {
  return new HttpError(
    409,
    'NOT_SANDBOX',
    owner
      ? `node actions are run by console ${owner.instance}, which ${owner.what} (one console at a time, so that no two change node states under each other); act through that console — this one is ${instanceName()}`
      : 'the masters did not answer which console drives the sandbox supervisor (a majority is needed); try again',
  );
}

/** Run a process or network action on a sandbox node; audited with the node's state before and after. */
export async function runNodeAction(principal: Principal, id: number, action: NodeAction): Promise<{ node: PublicNodeStatus }> {
  const runtime = getRuntime();
  if (!runtime.control) {
    // Another console may drive a supervisor of these masters: name it rather than say "external".
    const owner = runtime.mode === 'external' ? await leaseHolder('sandbox-supervisor').catch(() => null) : null;
    if (owner) throw notTheOwner(owner);
    throw new HttpError(
      409,
      'NOT_SANDBOX',
      runtime.mode === 'external'
        ? 'these are external masters: the console does not own their processes or network, so it will not crash, stop or partition them'
        : 'no masters are configured',
    );
  }
  const ownership = await supervisorOwnership();
  if (ownership === null || 'instance' in ownership) throw notTheOwner(ownership);
  if (id > runtime.endpoints.length) throw notFound(`there is no node ${id} (nodes are 1…${runtime.endpoints.length})`);
  const before = atNode(await runtime.control.nodes(), id);
  const { actor, role } = actorOf(principal);
  const startedAt = Date.now();
  try {
    const node = await runtime.control.act(id, action);
    await recordAudit({
      actor,
      role,
      action: `node.${action.action}`,
      target: `node ${id}`,
      outcome: 'ok',
      before: before ? snapshotOf(before) : null,
      after: snapshotOf(node),
      detail: JSON.stringify(action),
    });
    // A start that happened in this action: whether the supervisor adopted the restart, or why not.
    const continuity = node.continuity;
    if (continuity && continuity.at >= startedAt) {
      await recordAudit({
        actor,
        role,
        action: 'node.continuity',
        target: `node ${id}`,
        outcome: continuity.adopted ? 'adopted' : 'not-adopted',
        after: { code: continuity.code, runId: continuity.runId, previousRunId: continuity.previousRunId },
        detail: continuity.reason,
      });
    }
    return { node: publicStatus(node) };
  } catch (err) {
    await recordAudit({
      actor,
      role,
      action: `node.${action.action}`,
      target: `node ${id}`,
      outcome: 'failed',
      before: before ? snapshotOf(before) : null,
      detail: (err as Error).message,
    });
    throw err;
  }
}

/**
 * End a node's quarantine now: the operator states the node holds no lock that was lost. Safe for
 * a node that was never used or was down longer than maxTtl; otherwise a lock granted with the
 * node's help may still be valid elsewhere, so the answer and the audit entry carry a warning
 * (any restart or data loss less than maxTtl ago, or no sentinel at all). With `seen` (what the
 * console showed the operator), a compare-and-set: a node that restarted or lost its data again
 * since is not touched, and the answer is 409 SENTINEL_CHANGED.
 */
export async function markClean(
  principal: Principal,
  id: number,
  reason: string,
  seen?: SeenSentinel,
): Promise<{ node: number; markedAt: number; runId: string | null; warning: string | null }> {
  const runtime = getRuntime();
  const client = atNode(runtime.clients, id);
  if (!client) throw notFound(`there is no node ${id} (nodes are 1…${runtime.endpoints.length})`);
  await ensureReady(client, 1_000).catch(() => {
    throw new HttpError(503, 'NODE_UNREACHABLE', `node ${id} is not reachable; it can be marked clean once it answers`);
  });
  const [raw, infoText, [seconds, micros]] = await Promise.all([
    client.hgetall(epochKey(runtime.keyPrefix)),
    client.info('server'),
    client.time(),
  ]);
  const info = parseInfo(infoText);
  const uptime = info.get('uptime_in_seconds');
  const epoch = parseEpoch(raw);
  const risk = markCleanWarningOf(epoch, {
    nodeNow: Number(seconds) * 1000 + Math.floor(Number(micros) / 1000),
    runIdNow: info.get('run_id') ?? null,
    uptimeMs: uptime === undefined ? null : Number(uptime) * 1000,
    maxTtlMs: runtime.maxTtlMs,
  });
  const warning = risk ? `node ${id}: ${risk}` : null;
  const { actor, role } = actorOf(principal);
  const before = epoch
    ? {
        runId: epoch.runId ?? null,
        createdAt: epoch.createdAt,
        quarantineUntil: epoch.quarantineUntil,
        cause: epoch.cause ?? null,
        seen: seen ?? null,
      }
    : { sentinel: null, seen: seen ?? null };
  let sentinel;
  try {
    sentinel = await markNodeClean(client, {
      keyPrefix: runtime.keyPrefix,
      maxTtlMs: runtime.maxTtlMs,
      origin: `marked clean by ${actor}`,
      seen,
    });
  } catch (err) {
    if (!(err instanceof SentinelChangedError)) throw err;
    const message = await refusalMessage(client, runtime.keyPrefix, id, seen, err.message);
    await recordAudit({
      actor,
      role,
      action: 'node.mark-clean',
      target: `node ${id}`,
      reason,
      outcome: 'refused',
      before,
      detail: message,
    });
    throw new HttpError(409, 'SENTINEL_CHANGED', message);
  }
  await recordAudit({
    actor,
    role,
    action: 'node.mark-clean',
    target: `node ${id}`,
    reason,
    outcome: warning ? 'ok-with-warning' : 'ok',
    before,
    after: { runId: sentinel.runId ?? null, createdAt: sentinel.createdAt, quarantineUntil: sentinel.quarantineUntil },
    detail: warning ?? '',
  });
  return { node: id, markedAt: sentinel.createdAt, runId: sentinel.runId ?? null, warning };
}

/**
 * Why a mark-clean compare-and-set was refused, in the operator's terms: the sentinel changed since
 * the look (a restart or loss recorded in between), or it is the one seen but speaks for a process
 * that is no longer running (a restart no client has recorded yet: there is nothing sound to mark).
 */
async function refusalMessage(
  client: Redis,
  keyPrefix: string,
  id: number,
  seen: SeenSentinel | undefined,
  fallback: string,
): Promise<string> {
  const [raw, infoText] = await Promise.all([client.hgetall(epochKey(keyPrefix)), client.info('server')]).catch(
    () => [null, null] as const,
  );
  const now = parseEpoch(raw);
  const runIdNow = infoText ? (parseInfo(infoText).get('run_id') ?? null) : null;
  const same =
    now !== null &&
    seen !== undefined &&
    (now.runId ?? null) === seen.runId &&
    (seen.createdAt === undefined || now.createdAt === seen.createdAt);
  if (same && runIdNow !== null && now.runId !== runIdNow) {
    return `node ${id} restarted (process ${shortRunId(now.runId)} → ${shortRunId(runIdNow)}) and no client has recorded the restart yet, so the sentinel you saw speaks for a process that is gone: look again after the next acquire`;
  }
  if (raw === null) return `node ${id}: ${fallback}`;
  const what =
    now === null
      ? 'no sentinel at all'
      : `${now.cause ? `${CAUSE_LABEL[now.cause]}, ` : ''}${now.origin}, process ${shortRunId(now.runId)}, written ${new Date(now.createdAt).toISOString()}`;
  return `node ${id}'s epoch sentinel changed since it was looked at (now: ${what}): look again before marking it clean`;
}
