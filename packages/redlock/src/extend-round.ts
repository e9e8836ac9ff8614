/**
 * The extend round (Lock.extend(), Redlock.extendToken()): compare-and-pexpire on every node,
 * decided as protocol.ts decides a grant: a quorum, within the validity.
 */
import { InvalidArgumentError, LockExpiredError, QuorumUnavailableError, type RedlockError } from './errors';
import type { ProtocolContext } from './protocol';
import { blockingSize, validityHorizonMs, validityMs } from './quorum';
import { isOne, ScriptCall } from './resp';
import { Round } from './round';
import { EXTEND_SCRIPT } from './scripts';
import { countReason, summarizeVotes, type Vote } from './votes';

export type ExtendOutcome =
  { ok: true; validUntil: number; expiresAt: number; votes: readonly Vote[]; durationMs: number } | { ok: false; error: RedlockError };

/**
 * Compare-and-pexpire on every node; success needs a quorum, within the current validity when
 * one is known (`validUntil`, monotonic ms), and a positive new validity counted from this
 * extend's own start. PEXPIRE GT never shortens a key, so a failed extend leaves the old validity
 * intact; and a quorum that still holds our token has held it without a gap (a token is only
 * ever set once), so no one else can have been granted the lock meanwhile.
 */
export async function extendKeys(
  ctx: ProtocolContext,
  resources: readonly string[],
  lockKeys: readonly string[],
  token: string,
  ttlMs: number,
  validUntil: number | null,
): Promise<ExtendOutcome> {
  const { nodes, quorum, settings } = ctx;
  const t0 = performance.now();
  const wall0 = Date.now();
  const what = resources.length === 1 ? JSON.stringify(resources[0]) : `${resources.length} resources`;
  if (validUntil !== null && validUntil <= t0) {
    return { ok: false, error: new LockExpiredError(`extend ${what}: the lock's validity has run out`, [], resources) };
  }
  const horizon = validityHorizonMs(ttlMs, settings.driftFactor);
  if (horizon <= 0)
    return { ok: false, error: new InvalidArgumentError('ttlMs', `is too short to leave any validity after drift, got ${ttlMs}`) };
  const limit = validUntil === null ? horizon : Math.min(horizon, validUntil - t0);
  const timeout = Math.min(settings.nodeTimeoutMs, limit);
  const round = new Round(nodes, quorum, false, timeout, onExtendReply, ctx.onNodeError);
  const args: (string | number)[] = lockKeys.slice();
  args.push(token, ttlMs);
  const call = new ScriptCall(EXTEND_SCRIPT, lockKeys.length, args);
  for (let i = 0; i < nodes.length; i++) nodes[i]!.call(call, round.reply(i));
  await round.done;
  const now = performance.now();
  const validity = validityMs(ttlMs, now - t0, settings.driftFactor);
  const late = validUntil !== null && now >= validUntil;
  const summary = summarizeVotes(round.votes);
  if (round.forCount >= quorum && validity > 0 && !late) {
    const drift = ttlMs * settings.driftFactor + 2;
    return { ok: true, validUntil: t0 + ttlMs - drift, expiresAt: wall0 + ttlMs - drift, votes: round.votes, durationMs: now - t0 };
  }
  if (late || validity <= 0 || (round.timedOut && limit <= settings.nodeTimeoutMs)) {
    return {
      ok: false,
      error: new LockExpiredError(`extend ${what}: validity ran out before a quorum extended it (${summary})`, round.votes, resources),
    };
  }
  if (countReason(round.votes, 'lost') >= blockingSize(nodes.length)) {
    return {
      ok: false,
      error: new LockExpiredError(`extend ${what}: the lock is no longer held on enough nodes (${summary})`, round.votes, resources),
    };
  }
  return { ok: false, error: new QuorumUnavailableError(`extend ${what}: too few nodes could vote (${summary})`, round.votes, resources) };
}

function onExtendReply(round: Round, i: number, reply: unknown): void {
  if (isOne(reply)) round.accept(i);
  else round.reject(i, 'lost');
}
