import 'server-only';
import type { ExtendResponse, LockGrant, ReleaseResponse, VoteView } from '../../api/locks';
import { LockContendedError, type Vote } from '@redlock-console/redlock';
import { actorOf, allows, type Principal } from '../auth/principal';
import { lockErrorOf } from '../http/error-response';
import { badRequest } from '../http/errors';
import { readyLockCore } from '../lock-core';
import { recordLockHistory, tokenFingerprint } from '../lock-history';
import { keyQuotas } from '../quotas';

/** The votes as the API shows them (the core numbers nodes from 1, as the API does). */
export function voteViews(votes: readonly Vote[]): VoteView[] {
  return votes.map((v) => ({ ...v }));
}

export interface AcquireInput {
  resources: string[];
  ttlMs: number;
  fenced?: boolean;
  metadata?: Record<string, string>;
  waitMs?: number;
}

/**
 * Take a lock for a program (API key) or an operator (playground). The holder metadata names who
 * asked unless the caller says otherwise (`owner`), and always who authenticated (`principal`);
 * with `waitMs` the request keeps trying (woken by releases) and gives up when the time is over or
 * the HTTP client goes away.
 */
export async function acquireLock(principal: Principal, input: AcquireInput, signal: AbortSignal): Promise<LockGrant> {
  const redlock = await readyLockCore();
  const waitMs = input.waitMs ?? 0;
  // The shortest sleep between attempts: the retry budget below never ends a wait before waitMs does.
  const shortestSleepMs = Math.max(1, redlock.settings.retryDelayMs - redlock.settings.retryJitterMs);
  const { actor, role } = actorOf(principal);
  // An API key's quotas (quotas/key-quotas.ts): refused whole here, before any master is asked.
  const quotaKey = principal.kind === 'api-key' ? principal.username : null;
  const ticket = quotaKey === null ? null : keyQuotas().admit(quotaKey, input.resources.length, waitMs > 0);
  const lock = await redlock
    .acquire(input.resources, input.ttlMs, {
      fenced: input.fenced,
      // `owner` and the rest are the client's own claims (a key may call itself "operator");
      // `principal` is who actually authenticated, written last so no client can set it.
      metadata: { owner: actor, via: 'http', ...input.metadata, principal: `${role}:${actor}` },
      // A wait that runs out rejects with the last attempt's error (maxWaitMs): 409 when the lock is
      // held, 503 when no quorum answered, as without a wait. The signal is the client going away.
      retryCount: waitMs > 0 ? Math.ceil(waitMs / shortestSleepMs) + 1 : 0,
      maxWaitMs: waitMs > 0 ? waitMs : undefined,
      signal,
    })
    .then((granted) => {
      // Counted as held before the ticket's reservation ends (below): no moment without either.
      if (quotaKey !== null) keyQuotas().granted(quotaKey, granted.token, granted.resources.length, granted.expiresAt, granted.resources);
      return granted;
    })
    .catch((err: unknown) => {
      throw allows(principal, 'read') ? err : withoutHolder(err);
    })
    .finally(() => ticket?.end());
  recordLockHistory({
    event: 'granted',
    resources: [...lock.resources],
    token: tokenFingerprint(lock.token),
    fence: lock.fence,
    principal: `${role}:${actor}`,
    metadata: input.metadata ?? {},
    ttlMs: input.ttlMs,
    expiresAt: lock.expiresAt,
    detail: '',
  });
  return {
    resources: [...lock.resources],
    token: lock.token,
    fence: lock.fence,
    validityMs: lock.validityMs,
    expiresAt: lock.expiresAt,
    votes: voteViews(lock.votes),
  };
}

/**
 * A refused acquire names its holder (owner, host, pid…: the metadata of someone else's lock, a
 * semaphore slot's or a read-write lock's).
 * Only principals that may read the locks anyway (console sessions) get it; an API key gets the
 * refusal and its votes without who holds the lock.
 */
export function withoutHolder(err: unknown): unknown {
  // As errorParts recognises it (brand and name, from either copy of the core): a refusal the
  // mapper answers with its holder is never let through unredacted.
  if (lockErrorOf(err)?.code !== 'LOCK_CONTENDED') return err;
  const refusal = err as LockContendedError;
  if (refusal.holder === null || refusal.holder === undefined) return err;
  let message = refusal.message.replace(/ held by another client "(?:[^"\\]|\\.)*"/, ' held by another client');
  // A semaphore's or read-write lock's refusal names its holder in its own words (semaphore-slots.ts,
  // rwlock-read.ts): ` (one holder: "<owner>")`, a writer's ` ("<owner>")`; any other mention is masked.
  const owner = refusal.holder.owner;
  if (owner) {
    const quoted = JSON.stringify(owner);
    message = message.replace(` (one holder: ${quoted})`, '').replace(` (${quoted})`, '').split(quoted).join('"…"');
  }
  return new LockContendedError(message, refusal.votes, refusal.resources, null);
}

function resourcesFor(pathResource: string, bodyResources: string[] | undefined): string[] {
  if (!bodyResources) return [pathResource];
  if (!bodyResources.includes(pathResource)) throw badRequest(`resources must include the resource in the path (${pathResource})`);
  return bodyResources;
}

/** Who did it, as the lock history names them: `client:<key name>` or `<role>:<user>`. */
function principalName(principal: Principal): string {
  const { actor, role } = actorOf(principal);
  return `${role}:${actor}`;
}

export async function extendLock(
  principal: Principal,
  resource: string,
  body: { token: string; ttlMs: number; resources?: string[] },
): Promise<ExtendResponse> {
  const result = await (await readyLockCore()).extendToken(resourcesFor(resource, body.resources), body.token, body.ttlMs);
  keyQuotas().extended(body.token, result.expiresAt);
  recordLockHistory({
    event: 'extended',
    resources: [...result.resources],
    token: tokenFingerprint(body.token),
    fence: null,
    principal: principalName(principal),
    metadata: {},
    ttlMs: body.ttlMs,
    expiresAt: result.expiresAt,
    detail: '',
  });
  return {
    resources: [...result.resources],
    token: result.token,
    validityMs: result.validityMs,
    expiresAt: result.expiresAt,
    votes: voteViews(result.votes),
  };
}

export async function releaseLock(
  principal: Principal,
  resource: string,
  body: { token: string; resources?: string[] },
): Promise<ReleaseResponse> {
  // The API's `deleted` and `complete` count every node (the OpenAPI schema): the settled outcome.
  const result = await (await (await readyLockCore()).releaseToken(resourcesFor(resource, body.resources), body.token)).settled;
  // A release of a token nobody holds changed nothing: no entry (a client's retries or a typo).
  if (result.deleted > 0) {
    // The resources named (some of a multi-resource lock's, or all): those it held give their room back.
    keyQuotas().released(body.token, resourcesFor(resource, body.resources));
    recordLockHistory({
      event: 'released',
      resources: [...result.resources],
      token: tokenFingerprint(body.token),
      fence: null,
      principal: principalName(principal),
      metadata: {},
      ttlMs: null,
      expiresAt: null,
      detail: `keys deleted on ${result.deleted} node(s)${result.complete ? '' : ' (not every node answered)'}`,
    });
  }
  return {
    resources: [...result.resources],
    released: result.deleted > 0,
    deleted: result.deleted,
    complete: result.complete,
    votes: voteViews(result.votes),
  };
}
