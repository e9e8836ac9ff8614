import 'server-only';
import { randomUUID } from 'node:crypto';
import { rwSlotName, semaphoreSlotName } from '@redlock-console/redlock';
import type { SlotForceReleaseBody, SlotForceReleaseResponse } from '../api/slot-locks';
import { holderLiveness, readSlotLock, type LockCell, type SlotKind, type SlotLock, type SlotReading } from '../inspect';
import { nodeNumber } from '../node-number';
import { actorOf, type Principal } from './auth/principal';
import { beginAudit, completeAudit } from './audit';
import { forceReleaseStarted, publishEvent } from './events';
import { holderNamed, liveHolderRefused } from './force-release';
import { badRequest, conflict, unavailable } from './http/errors';
import { FORCE_RELEASE_INCOMPLETE, holderClaims, recordLockHistory, tokenFingerprint, writeLockHistoryNow } from './lock-history';
import { readyLockCore } from './lock-core';
import { metrics, type ForceReleaseOutcome } from './metrics';
import { keyQuotas } from './quotas';
import { getRuntime } from './runtime';

/**
 * Force-release of one semaphore permit's slot, or of one read-write lock holder (a reader's slot,
 * or every slot of the writer), in an incident: the mutex's force-release (force-release.ts) over
 * slot keys. The core's by-token release of those slots is a compare-and-delete on each node
 * (packages/redlock/src/slot-tokens.ts): a key that holds another token, another permit's slot or
 * a newer holder's, is never deleted. On top of that, the token must be seen now on the slots it
 * names (else 409, nothing written), so a wrong token or a token of another slot is refused, not
 * answered with a release that deleted nothing. A waiting writer's intent is not released here:
 * it is the writer's own acquire, withdrawn when it ends, and expires with its ttl.
 */
type NodeState = { token: string | null; pttlMs: number | null } | null;
type Outcome = SlotForceReleaseResponse['results'][number]['nodes'][number]['outcome'];

const slotName = (kind: SlotKind, resource: string, slot: number) =>
  kind === 'semaphore' ? semaphoreSlotName(resource, slot) : rwSlotName(resource, slot);

function readLock(kind: SlotKind, resource: string): Promise<SlotReading> {
  const runtime = getRuntime();
  return readSlotLock(runtime.clients, kind, resource, {
    keyPrefix: runtime.keyPrefix,
    configuredNodes: runtime.endpoints.length,
    driftFactor: runtime.driftFactor,
    maxTtlMs: runtime.maxTtlMs,
  });
}

/** Each node's state of `slot` (null: the node could not be read). */
function statesOf(read: SlotReading, slot: number): NodeState[] {
  const cells = read.locks[0]?.rows.find((r) => r.slot === slot)?.view.cells;
  return read.nodes.map((n) => {
    if (!n.ok) return null;
    const cell = cells?.find((c) => c.node === n.node);
    return cell?.present ? { token: cell.token, pttlMs: cell.pttlMs } : { token: null, pttlMs: null };
  });
}

/** The cells of `token` on slot keys of `lock` (the intent excluded), by slot. */
function tokenSlots(lock: SlotLock | undefined, token: string): Map<number, LockCell[]> {
  const found = new Map<number, LockCell[]>();
  for (const { slot, view } of lock?.rows ?? []) {
    if (slot === null) continue;
    const cells = view.cells.filter((c) => c.present && c.token === token);
    if (cells.length > 0) found.set(slot, cells);
  }
  return found;
}

/** The slots to release: the one named (a semaphore's permit; a read-write lock may name one too), else every slot of the token. */
function targetSlots(
  kind: SlotKind,
  read: SlotReading,
  body: SlotForceReleaseBody,
): { slots: number[]; meta: Record<string, string> | null; cells: LockCell[] } {
  const lock = read.locks[0];
  const held = tokenSlots(lock, body.token);
  if (kind === 'semaphore' && body.slot === undefined)
    throw badRequest('name the permit\'s slot ("slot"): a semaphore is force-released one slot at a time');
  // A read-write lock's writer holds every slot with one token: released whole, never in part
  // (a writer left on some slots would still shut readers out while it believes nothing changed).
  if (kind === 'rwlock' && body.slot !== undefined && held.size > 1)
    throw badRequest('that token is the writer, which holds every slot: it is released whole; send no "slot"');
  const slots = body.slot === undefined ? [...held.keys()] : held.has(body.slot) ? [body.slot] : [];
  if (slots.length === 0) {
    const where = body.slot === undefined ? 'any slot' : `slot ${body.slot}`;
    const intent = lock?.rows.some((r) => r.slot === null && r.view.cells.some((c) => c.token === body.token));
    throw conflict(
      intent
        ? "that token is a waiting writer's intent, which is its acquire's own: it is withdrawn when the acquire ends and expires with its ttl"
        : `that token is not on ${where} on any node now (released, expired, or another holder's): nothing was written`,
    );
  }
  const cells = slots.flatMap((s) => held.get(s) ?? []);
  const meta = cells.find((c) => c.meta)?.meta ?? null;
  return { slots, meta, cells };
}

function outcomeOf(before: NodeState, after: NodeState, token: string): Outcome {
  if (!before) return 'unreachable';
  if (before.token === null) return 'absent';
  if (before.token !== token) return 'other-holder';
  if (!after) return 'unreachable';
  return after.token === token ? 'unreachable' : 'deleted';
}

/**
 * Force-release `token` on `resource`'s slots: checked against a read of every node, audited and
 * written to the lock history before the first delete (a majority of the masters, as the mutex's),
 * then the core's compare-and-delete of those slots, then each slot's per-node outcome.
 */
export async function forceReleaseSlot(
  principal: Principal,
  kind: SlotKind,
  resource: string,
  body: SlotForceReleaseBody,
): Promise<SlotForceReleaseResponse> {
  const seen = await readLock(kind, resource);
  const { slots, meta, cells } = targetSlots(kind, seen, body);
  const names = slots.map((s) => slotName(kind, resource, s));
  const liveness = holderLiveness(cells, body.token, seen.readAt);
  if (body.dryRun) return dryRunOf(kind, resource, body.token, seen, slots, liveness);
  // As the mutex's: a live holder goes on as if it held its slots until its next extend or check;
  // released only when the operator said it saw that. Refused before anything is written.
  if (liveness.pulse === 'alive' && body.confirmLiveHolder !== true) throw liveHolderRefused(liveness);
  const { actor, role } = actorOf(principal);
  const fingerprint = tokenFingerprint(body.token);
  const claims = holderClaims(meta ?? {});
  const detail = `token ${body.token.slice(0, 12)}…; ${kind} ${resource}, slot${slots.length > 1 ? 's' : ''} ${slots.join(', ')}`;
  const target = names.length === 1 ? names[0]! : `${names[0]} … ${names.at(-1)} (${names.length} slots)`;
  const history = {
    resources: names,
    token: fingerprint,
    fence: null,
    principal: `${role}:${actor}`,
    metadata: claims,
    ttlMs: null,
    expiresAt: null,
  };
  const auditId = randomUUID();
  const before = slots.map((s) => ({ slot: s, states: statesOf(seen, s) }));
  const [begun] = await Promise.all([
    beginAudit(auditId, {
      actor,
      role,
      action: 'lock.force-release',
      target,
      reason: body.reason,
      outcome: 'incomplete',
      before: before.flatMap(({ slot, states }) => states.map((state, i) => ({ slot, node: nodeNumber(i), ...state }))),
      detail,
      holder: await holderNamed(meta, names[0]!, body.token),
    }),
    writeLockHistoryNow({
      ...history,
      event: 'force-released',
      detail: `${FORCE_RELEASE_INCOMPLETE} (audit ${auditId}): ${body.reason}`,
    }).catch(() => null),
  ]);
  if (!begun.majority) {
    await completeAudit(begun.entry, {
      outcome: 'nothing-deleted',
      detail: `${detail}; the audit entry reached no majority of the masters`,
    });
    throw unavailable('the audit entry could not be written to a majority of the masters first: nothing was deleted');
  }
  const done = names.map((name) => forceReleaseStarted(name));
  const core = await readyLockCore();
  const release =
    kind === 'semaphore' ? core.releasePermitToken(resource, slots, body.token) : core.releaseRwToken(resource, slots, body.token);
  const result = await (await release).settled.finally(() => done.forEach((end) => end()));
  // The slots released, by name (a permit of k slots keeps the others): their share of the room only.
  if (result.deleted > 0) keyQuotas().released(body.token, names);
  const after = await readLock(kind, resource);
  const results = before.map(({ slot, states }) => {
    const now = statesOf(after, slot);
    return {
      slot,
      nodes: states.map((state, i) => {
        const outcome = outcomeOf(state, now[i] ?? null, body.token);
        return {
          node: nodeNumber(i),
          before: state,
          after: now[i] ?? null,
          outcome,
          error: outcome === 'unreachable' ? 'not deleted (no answer)' : null,
        };
      }),
    };
  });
  const deleted = results.reduce((sum, r) => sum + r.nodes.filter((n) => n.outcome === 'deleted').length, 0);
  const outcome: ForceReleaseOutcome = deleted === 0 ? 'nothing-deleted' : result.complete ? 'ok' : 'partial';
  metrics().forceReleases.inc({ outcome });
  recordLockHistory({ ...history, event: 'force-released', detail: `${outcome} (audit ${auditId}): ${body.reason}` });
  const { entry } = await completeAudit(begun.entry, {
    outcome,
    after: results.flatMap(({ slot, nodes }) => nodes.map((n) => ({ slot, node: n.node, outcome: n.outcome, ...n.after }))),
  });
  for (const [i, name] of names.entries()) {
    const nodes = results[i]!.nodes.filter((n) => n.outcome === 'deleted').map((n) => n.node);
    publishEvent({ type: 'lock.force-released', resource: name, nodes, detail: actor, source: 'service' });
  }
  return { kind, resource, token: body.token, slots, deleted, dryRun: false, results, auditId: entry.id, liveness };
}

/** What each node would do: the token's slots, each node's key now; nothing written, no audit entry. */
function dryRunOf(
  kind: SlotKind,
  resource: string,
  token: string,
  seen: SlotReading,
  slots: number[],
  liveness: ReturnType<typeof holderLiveness>,
): SlotForceReleaseResponse {
  const results = slots.map((slot) => ({
    slot,
    nodes: statesOf(seen, slot).map((state, i) => ({
      node: nodeNumber(i),
      before: state,
      after: null,
      error: state ? null : 'unreachable',
      outcome: !state
        ? ('unreachable' as const)
        : state.token === null
          ? ('absent' as const)
          : state.token === token
            ? ('would-delete' as const)
            : ('other-holder' as const),
    })),
  }));
  return { kind, resource, token, slots, deleted: 0, dryRun: true, results, auditId: null, liveness };
}
