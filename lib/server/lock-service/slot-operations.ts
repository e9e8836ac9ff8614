import 'server-only';
import type { Lock, Permit, RwLock } from '@redlock-console/redlock';
import type { PermitView, SemaphoreAcquireBody, SlotsExtendResponse, SlotsReleaseResponse } from '../../api/semaphores';
import type { RwAcquireBody, RwGrantView } from '../../api/rwlocks';
import { actorOf, allows, type Principal } from '../auth/principal';
import { readyLockCore } from '../lock-core';
import { recordLockHistory, tokenFingerprint } from '../lock-history';
import { keyQuotas } from '../quotas';
import { voteViews, withoutHolder } from './operations';

/**
 * Semaphore permits and read and write locks for programs (API keys) and operators, with the
 * mutex's contract (operations.ts): the same quotas (a permit of k slots counts k locks held, a
 * read or write lock one), the holder's metadata hidden from API keys in a refusal, the same
 * metadata (`owner`, `via`, `principal` written last), `waitMs` as the mutex's, and lock history
 * entries under the slots' names (`sem:<resource>:<slot>`, `rw:<resource>:<slot>`: the names the
 * core and the console's events give them).
 */

type SlotKind = 'semaphore' | 'rwlock';

interface Wait {
  retryCount: number;
  maxWaitMs: number | undefined;
  signal: AbortSignal;
}

/** Take a grant through `take`, admitted by the API key's quotas first, as acquireLock does. */
async function admitted<L extends Lock>(
  principal: Principal,
  holds: number,
  waitMs: number,
  signal: AbortSignal,
  take: (metadata: Record<string, string>, wait: Wait) => Promise<L>,
  clientMetadata: Record<string, string> | undefined,
): Promise<L> {
  const redlock = await readyLockCore();
  // The shortest sleep between attempts: the retry budget never ends a wait before waitMs does.
  const shortestSleepMs = Math.max(1, redlock.settings.retryDelayMs - redlock.settings.retryJitterMs);
  const { actor, role } = actorOf(principal);
  const quotaKey = principal.kind === 'api-key' ? principal.username : null;
  const ticket = quotaKey === null ? null : keyQuotas().admit(quotaKey, holds, waitMs > 0);
  const metadata = { owner: actor, via: 'http', ...clientMetadata, principal: `${role}:${actor}` };
  const wait: Wait = {
    retryCount: waitMs > 0 ? Math.ceil(waitMs / shortestSleepMs) + 1 : 0,
    maxWaitMs: waitMs > 0 ? waitMs : undefined,
    signal,
  };
  return take(metadata, wait)
    .then((granted) => {
      if (quotaKey !== null) keyQuotas().granted(quotaKey, granted.token, holds, granted.expiresAt, granted.resources);
      return granted;
    })
    .catch((err: unknown) => {
      throw allows(principal, 'read') ? err : withoutHolder(err);
    })
    .finally(() => ticket?.end());
}

function recordGrant(principal: Principal, lock: Lock, ttlMs: number, metadata: Record<string, string> | undefined, detail: string): void {
  const { actor, role } = actorOf(principal);
  recordLockHistory({
    event: 'granted',
    resources: [...lock.resources],
    token: tokenFingerprint(lock.token),
    fence: lock.fence,
    principal: `${role}:${actor}`,
    metadata: metadata ?? {},
    ttlMs,
    expiresAt: lock.expiresAt,
    detail,
  });
}

function fencesOf(lock: Permit | RwLock): Array<{ slot: number; fence: number }> {
  const fence = lock.fence;
  return fence === null ? [] : lock.slots.map((slot) => ({ slot, fence }));
}

/** POST /api/semaphores */
export async function acquirePermit(principal: Principal, body: SemaphoreAcquireBody, signal: AbortSignal): Promise<PermitView> {
  const permits = body.permits ?? 1;
  const redlock = await readyLockCore();
  const permit = await admitted(
    principal,
    permits,
    body.waitMs ?? 0,
    signal,
    (metadata, wait) =>
      redlock.acquireSemaphore(body.resource, body.limit, body.ttlMs, { permits, fenced: body.fenced, metadata, ...wait }),
    body.metadata,
  );
  recordGrant(principal, permit, body.ttlMs, body.metadata, `semaphore permit: slots ${permit.slots.join(', ')} of ${permit.limit}`);
  return {
    resource: permit.resource,
    limit: permit.limit,
    token: permit.token,
    slots: [...permit.slots],
    fence: permit.fence,
    fences: fencesOf(permit),
    validityMs: permit.validityMs,
    expiresAt: permit.expiresAt,
    votes: voteViews(permit.votes),
  };
}

/** POST /api/rwlocks/{resource}/read and /write */
export async function acquireRwLock(
  principal: Principal,
  resource: string,
  mode: 'read' | 'write',
  body: RwAcquireBody,
  signal: AbortSignal,
): Promise<RwGrantView> {
  const redlock = await readyLockCore();
  const lock = await admitted(
    principal,
    1,
    body.waitMs ?? 0,
    signal,
    (metadata, wait) => {
      const options = { maxReaders: body.maxReaders, fenced: body.fenced, metadata, ...wait };
      return mode === 'read' ? redlock.acquireRead(resource, body.ttlMs, options) : redlock.acquireWrite(resource, body.ttlMs, options);
    },
    body.metadata,
  );
  recordGrant(principal, lock, body.ttlMs, body.metadata, `${mode} lock: slots ${lock.slots.join(', ')} of ${lock.maxReaders}`);
  return {
    resource: lock.resource,
    mode: lock.mode,
    maxReaders: lock.maxReaders,
    token: lock.token,
    slots: [...lock.slots],
    fence: lock.fence,
    fences: fencesOf(lock),
    validityMs: lock.validityMs,
    expiresAt: lock.expiresAt,
    votes: voteViews(lock.votes),
  };
}

/** POST /api/semaphores/{resource}/extend and /api/rwlocks/{resource}/extend: by token and slots. */
export async function extendSlots(
  principal: Principal,
  kind: SlotKind,
  resource: string,
  body: { token: string; slots: number[]; ttlMs: number },
): Promise<SlotsExtendResponse> {
  const redlock = await readyLockCore();
  const result =
    kind === 'semaphore'
      ? await redlock.extendPermitToken(resource, body.slots, body.token, body.ttlMs)
      : await redlock.extendRwToken(resource, body.slots, body.token, body.ttlMs);
  keyQuotas().extended(body.token, result.expiresAt);
  const { actor, role } = actorOf(principal);
  recordLockHistory({
    event: 'extended',
    resources: [...result.resources],
    token: tokenFingerprint(body.token),
    fence: null,
    principal: `${role}:${actor}`,
    metadata: {},
    ttlMs: body.ttlMs,
    expiresAt: result.expiresAt,
    detail: '',
  });
  return {
    resource,
    slots: [...body.slots].sort((a, b) => a - b),
    token: result.token,
    validityMs: result.validityMs,
    expiresAt: result.expiresAt,
    votes: voteViews(result.votes),
  };
}

/** POST /api/semaphores/{resource}/release and /api/rwlocks/{resource}/release: compare-and-delete by token and slots. */
export async function releaseSlots(
  principal: Principal,
  kind: SlotKind,
  resource: string,
  body: { token: string; slots: number[] },
): Promise<SlotsReleaseResponse> {
  const redlock = await readyLockCore();
  const first =
    kind === 'semaphore'
      ? await redlock.releasePermitToken(resource, body.slots, body.token)
      : await redlock.releaseRwToken(resource, body.slots, body.token);
  // The API's `deleted` and `complete` count every node, as a lock's release does.
  const result = await first.settled;
  // A release of a token nobody holds changed nothing: no entry.
  if (result.deleted > 0) {
    // The slots released (some of a permit's, or all), by name: their share of the room only.
    keyQuotas().released(body.token, [...result.resources]);
    const { actor, role } = actorOf(principal);
    recordLockHistory({
      event: 'released',
      resources: [...result.resources],
      token: tokenFingerprint(body.token),
      fence: null,
      principal: `${role}:${actor}`,
      metadata: {},
      ttlMs: null,
      expiresAt: null,
      detail: `keys deleted on ${result.deleted} node(s)${result.complete ? '' : ' (not every node answered)'}`,
    });
  }
  return {
    resource,
    slots: [...body.slots].sort((a, b) => a - b),
    released: result.deleted > 0,
    deleted: result.deleted,
    complete: result.complete,
    votes: voteViews(result.votes),
  };
}
