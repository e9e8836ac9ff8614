import 'server-only';
import { randomUUID } from 'node:crypto';
import { UNKNOWN_HOLDER } from '../api/audit';
import type { ForceReleaseResponse } from '../api/locks';
import { holderLiveness, lockDetail, type HolderLiveness, type LockDetail } from '../inspect';
import { actorOf, type Principal } from './auth/principal';
import { beginAudit, completeAudit } from './audit';
import { conflict, unavailable } from './http/errors';
import { keyQuotas } from './quotas';
import {
  FORCE_RELEASE_INCOMPLETE,
  holderClaims,
  readLockHistory,
  recordLockHistory,
  tokenFingerprint,
  writeLockHistoryNow,
} from './lock-history';
import { forceReleaseStarted, publishEvent } from './events';
import { readyLockCore } from './lock-core';
import { metrics, type ForceReleaseOutcome } from './metrics';
import { getRuntime } from './runtime';
import { nodeNumber } from '../node-number';

type NodeState = { token: string | null; pttlMs: number | null } | null;

function statesOf(detail: LockDetail): NodeState[] {
  return detail.nodes.map((n) => {
    if (!n.ok) return null;
    const cell = detail.view?.cells.find((c) => c.node === n.node);
    return cell?.present ? { token: cell.token, pttlMs: cell.pttlMs } : { token: null, pttlMs: null };
  });
}

const HOLDER_FIELDS = ['principal', 'owner', 'host', 'pid', 'purpose'] as const;

/**
 * `principal=… owner=… host=…`. The values are the client's own words (its metadata): one that is
 * not a plain token (a space, `=`, a quote, a control character…) is written as a JSON string, so
 * no value can read as more fields (`owner: "x principal=client:billing"` made the holder
 * text name another principal).
 */
export function namedBy(meta: Readonly<Record<string, string>>): string | null {
  const fields = HOLDER_FIELDS.filter((k) => meta[k]).map((k) => `${k}=${holderValue(meta[k]!)}`);
  return fields.length > 0 ? fields.join(' ') : null;
}

function holderValue(value: string): string {
  return /^[\w.:@/+-]+$/.test(value) ? value : JSON.stringify(value);
}

/**
 * The holder the operator hit, as known before the release: the metadata stored with `token` on
 * the nodes (who authenticated, and who it says it is); else the grant of that token in the lock
 * history (the principal the lock service authenticated and the metadata the client sent), for a
 * key written without metadata; else UNKNOWN_HOLDER. Never throws: the history is best effort.
 */
async function holderOf(detail: LockDetail, resource: string, token: string): Promise<string> {
  return holderNamed(detail.view?.cells.find((c) => c.token === token && c.meta)?.meta ?? null, resource, token);
}

/**
 * The holder as the audit log names it: from the metadata of `token`'s keys, marked as their own
 * claim; else from the grant of `token` in the lock history of `historyResource` (what the lock
 * service authenticated); else UNKNOWN_HOLDER. For the mutex's force-release and the slots' alike.
 */
export async function holderNamed(meta: Readonly<Record<string, string>> | null, historyResource: string, token: string): Promise<string> {
  const fromKeys = meta ? namedBy(meta) : null;
  // Said so: a client writing to the masters directly can put any principal in its key's metadata;
  // only the lock history's grant is what the lock service itself authenticated.
  if (fromKeys) return `${fromKeys} (as the key's metadata says)`;
  const fingerprint = tokenFingerprint(token);
  const hold = await readLockHistory(historyResource, 16)
    .then((h) => h.holds.find((x) => x.token === fingerprint && x.grantSeen))
    .catch(() => undefined);
  if (hold) return namedBy({ ...hold.metadata, principal: hold.principal ?? '' }) ?? UNKNOWN_HOLDER;
  return UNKNOWN_HOLDER;
}

function readDetail(resource: string): Promise<LockDetail> {
  const runtime = getRuntime();
  return lockDetail(runtime.clients, resource, {
    keyPrefix: runtime.keyPrefix,
    configuredNodes: runtime.endpoints.length,
    driftFactor: runtime.driftFactor,
    maxTtlMs: runtime.maxTtlMs,
  });
}

/**
 * Force-release in an incident: compare-and-delete of the token the OPERATOR SAW, on every node.
 * If the lock changed hands between the look and the click, the new holder's keys hold another
 * token and are left alone, so a force-release can never break a newer holder's mutual
 * exclusion. `dryRun` reports what each node would do; every real run is audited with the
 * per-node state before and after.
 */
export async function forceRelease(
  principal: Principal,
  resource: string,
  input: { token: string; reason: string; dryRun?: boolean; batch?: string; confirmLiveHolder?: true },
): Promise<ForceReleaseResponse> {
  const seen = await readDetail(resource);
  const before = statesOf(seen);
  const liveness = holderLiveness(seen.view?.cells ?? [], input.token, seen.readAt);
  if (input.dryRun) {
    return {
      resource,
      token: input.token,
      dryRun: true,
      deleted: 0,
      auditId: null,
      liveness,
      nodes: before.map((state, i) => ({
        node: nodeNumber(i),
        before: state,
        after: null,
        error: state ? null : 'unreachable',
        outcome: !state ? 'unreachable' : state.token === null ? 'absent' : state.token === input.token ? 'would-delete' : 'other-holder',
      })),
    };
  }
  // A live holder is released only when the operator said it saw that: it goes on as
  // if it held the lock until its next extend or check. Refused before anything is written.
  if (liveness.pulse === 'alive' && input.confirmLiveHolder !== true) throw liveHolderRefused(liveness);
  const holder = await holderOf(seen, resource, input.token);
  const { actor, role } = actorOf(principal);
  const fingerprint = tokenFingerprint(input.token);
  // What the holder's key said of itself (its grant time, owner, extensions): the history keeps it
  // with the force-release, so a hold taken outside the lock service keeps its length.
  const claims = holderClaims(seen.view?.cells.find((c) => c.token === input.token && c.meta)?.meta ?? {});
  const detail = `token ${input.token.slice(0, 12)}…${input.batch ? `; ${input.batch}` : ''}`;
  // Write-ahead: who, on whom, why, and the state before — on a majority of the masters
  // BEFORE the first delete, in the audit log and in the lock history. A console killed during the
  // deletes leaves both (the audit entry shows as incomplete; the hold reads as force-released),
  // never nothing. Without a majority nothing is deleted.
  const auditId = randomUUID();
  const [begun] = await Promise.all([
    beginAudit(auditId, {
      actor,
      role,
      action: 'lock.force-release',
      target: resource,
      reason: input.reason,
      outcome: 'incomplete', // beginAudit writes it so until completeAudit
      before: before.map((state, i) => ({ node: nodeNumber(i), ...state })),
      detail,
      holder,
    }),
    writeLockHistoryNow({
      event: 'force-released',
      resources: [resource],
      token: fingerprint,
      fence: null,
      principal: `${role}:${actor}`,
      metadata: claims,
      ttlMs: null,
      expiresAt: null,
      detail: `${FORCE_RELEASE_INCOMPLETE} (audit ${auditId}): ${input.reason}`,
    }).catch(() => null), // best effort: the audit entry is the record the deletes wait for
  ]);
  if (!begun.majority) {
    await completeAudit(begun.entry, {
      outcome: 'nothing-deleted',
      detail: `${detail}; the audit entry reached no majority of the masters`,
    });
    throw unavailable('the audit entry could not be written to a majority of the masters first: nothing was deleted');
  }
  // Every node's outcome (the answer at a quorum leaves slow nodes pending): the operator sees each.
  // One action, one live event: the masters' reports of these deletes are this force-release's.
  const deleting = forceReleaseStarted(resource);
  const result = await (async () => (await (await readyLockCore()).releaseToken([resource], input.token)).settled)().finally(deleting);
  // The holder's API key gets its room back (quotas/key-quotas.ts).
  // This resource of the grant (a multi-resource lock keeps the others): its room only.
  if (result.deleted > 0) keyQuotas().released(input.token, [resource]);
  const after = statesOf(await readDetail(resource));
  const nodes = result.votes.map((vote, i): ForceReleaseResponse['nodes'][number] => {
    const outcome =
      vote.reason === 'ok'
        ? 'deleted'
        : vote.reason === 'timeout' || vote.reason === 'error' || vote.reason === 'pending'
          ? 'unreachable'
          : (after[i]?.token ?? before[i]?.token ?? null) === null
            ? 'absent'
            : 'other-holder';
    return {
      node: nodeNumber(i),
      before: before[i] ?? null,
      outcome,
      after: after[i] ?? null,
      error: outcome === 'unreachable' ? (vote.detail ?? vote.reason) : null,
    };
  });
  const outcome: ForceReleaseOutcome = result.deleted === 0 ? 'nothing-deleted' : result.complete ? 'ok' : 'partial';
  metrics().forceReleases.inc({ outcome });
  // The history's end of this attempt: it ended the hold, or (nothing deleted) it did not.
  recordLockHistory({
    event: 'force-released',
    resources: [resource],
    token: fingerprint,
    fence: null,
    principal: `${role}:${actor}`,
    metadata: claims,
    ttlMs: null,
    expiresAt: null,
    detail: `${outcome} (audit ${auditId}): ${input.reason}`,
  });
  const { entry } = await completeAudit(begun.entry, {
    outcome,
    before: nodes.map((n) => ({ node: n.node, ...n.before })),
    after: nodes.map((n) => ({ node: n.node, outcome: n.outcome, ...n.after })),
  });
  publishEvent({
    type: 'lock.force-released',
    resource,
    nodes: nodes.filter((n) => n.outcome === 'deleted').map((n) => n.node),
    detail: actor,
    source: 'service',
  });
  return { resource, token: input.token, dryRun: false, deleted: result.deleted, nodes, auditId: entry.id, liveness };
}

export function liveHolderRefused(liveness: HolderLiveness) {
  const seconds = (ms: number | null) => (ms === null ? '?' : `${(ms / 1000).toFixed(1)} s`);
  return conflict(
    `the holder is alive: it extended ${seconds(liveness.sinceLastMs)} ago, every ~${seconds(liveness.everyMs)}, ` +
      `and learns it lost the lock only at its next extend or check (within ~${seconds(liveness.learnsWithinMs)}); ` +
      'send confirmLiveHolder: true to release it anyway',
    { liveness },
  );
}
