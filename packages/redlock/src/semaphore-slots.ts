/**
 * Choosing a semaphore's slots (semaphore.ts): a random guess, or one read of every slot on every
 * node. Only which slots an attempt asks for is decided here; whether it gets them is the mutex's
 * acquire (protocol.ts), so nothing in this file bears on mutual exclusion or fence order. A read
 * that is out of date by the time the grant runs costs a refused attempt, never a second holder.
 */
import { LockContendedError, QuorumUnavailableError, SemaphoreLimitMismatchError, type RedlockError } from './errors';
import type { LockNode } from './node';
import type { ProtocolContext } from './protocol';
import { encodeCommand } from './resp';
import { Round } from './round';
import { metaTextOf, parseMetaText } from './value';
import { summarizeVotes } from './votes';

/** The metadata field a slot's holder records its semaphore's `limit` in. */
export const LIMIT_FIELD = 'limit';

/** `count` distinct slots out of `from`, uniformly at random, ascending. */
export function pickSlots(from: readonly number[], count: number, random: () => number = Math.random): number[] {
  const pool = from.slice();
  for (let i = 0; i < count; i++) {
    const j = i + Math.floor(random() * (pool.length - i));
    [pool[i], pool[j]] = [pool[j]!, pool[i]!];
  }
  return pool.slice(0, count).sort((a, b) => a - b);
}

/** `count` slots out of `from`, at random, those not in `avoid` first (ascending). */
export function pickPreferring(from: readonly number[], avoid: ReadonlySet<number>, count: number): number[] {
  const preferred = from.filter((s) => !avoid.has(s));
  if (preferred.length >= count) return pickSlots(preferred, count);
  const rest = pickSlots(
    from.filter((s) => avoid.has(s)),
    count - preferred.length,
  );
  return [...preferred, ...rest].sort((a, b) => a - b);
}

/** 0, 1, …, n − 1. */
export function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}

/**
 * The mismatch a slot value shows: its holder recorded another limit than `limit` (or holds a slot
 * at or beyond `limit`, which only a larger limit has), or null. Values without metadata (another
 * library's, a bare token) show nothing.
 */
export function limitMismatch(value: string | null, slot: number, limit: number): number | null {
  if (value === null) return null;
  const recorded = parseMetaText(metaTextOf(value))?.[LIMIT_FIELD];
  if (recorded !== undefined && recorded !== String(limit)) return Number(recorded);
  if (slot >= limit) return recorded === undefined ? slot + 1 : Number(recorded);
  return null;
}

/** What one read found: the slots free on a quorum (at least the permits wanted), or why not (an attempt's error). */
export type SlotChoice = { ok: true; free: number[] } | { ok: false; error: RedlockError };

/**
 * Read slots 0 … limit (one more than there are, to see a holder that counts more) on every node,
 * one batch of GETs per node within the node timeout, and find the slots free (no key) on at least a
 * quorum, `permits` of them at least. Fails with SemaphoreLimitMismatchError when a live holder's
 * limit is not `limit`, QuorumUnavailableError when fewer than a quorum answered, and
 * LockContendedError when fewer than `permits` slots are free on a quorum (the semaphore is full).
 * `keys` and `names`: the slots' keys and names, 0 … limit (the names are reported by the errors).
 */
export async function chooseFreeSlots(
  ctx: ProtocolContext,
  resource: string,
  keys: readonly string[],
  names: readonly string[],
  limit: number,
  permits: number,
): Promise<SlotChoice> {
  const { nodes, quorum } = ctx;
  const free = new Array<number>(limit).fill(0);
  const seen: { mismatch: number | null; slot: number; holder: Record<string, string> | null } = { mismatch: null, slot: -1, holder: null };
  const round = new Round(
    nodes,
    nodes.length,
    true,
    ctx.settings.nodeTimeoutMs,
    (r, i, reply) => {
      const values = Array.isArray(reply) ? (reply as unknown[]) : [reply];
      const failed = values.find((v) => v instanceof Error) as Error | undefined;
      if (failed || values.length !== keys.length) {
        r.reject(i, 'error', failed ? failed.message : `unexpected reply ${JSON.stringify(values)}`);
        return;
      }
      let freeHere = 0;
      for (let slot = 0; slot < values.length; slot++) {
        const value = typeof values[slot] === 'string' ? (values[slot] as string) : null;
        const found = seen.mismatch === null ? limitMismatch(value, slot, limit) : null;
        if (found !== null) {
          seen.mismatch = found;
          seen.slot = slot;
        }
        if (slot >= limit) continue;
        if (value === null) {
          free[slot]!++;
          freeHere++;
        } else {
          seen.holder ??= parseMetaText(metaTextOf(value));
        }
      }
      // A node votes for when it could grant `permits` more slots, against (contended) when not.
      if (freeHere >= permits) r.accept(i, freeHere);
      else r.reject(i, 'contended', `${limit - freeHere} of ${limit} slots held here`);
    },
    ctx.onNodeError,
  );
  // One GET per slot in one batch, not one MGET: GET is a command the lock core's ACL user holds
  // (README, ACL), MGET is not, and a refused read would leave a full semaphore's waiter unable to
  // ever find a freed slot. The batch is sent together (one write), answered in order. Safety is
  // unchanged: a read (MGET or GETs, atomic per node or not) only chooses which slots to ask for;
  // the grant is the mutex's SET NX on a quorum, so mutual exclusion and fence order are as before.
  const reads = keys.map((key) => encodeCommand(['GET', key]));
  for (let i = 0; i < nodes.length; i++) (nodes[i] as LockNode).callBatch(reads, round.reply(i));
  await round.done;

  const votes = round.votes;
  const summary = summarizeVotes(votes);
  const what = JSON.stringify(resource);
  const { mismatch, holder } = seen;
  const reported = names.slice(0, limit);
  if (mismatch !== null) {
    return {
      ok: false,
      error: new SemaphoreLimitMismatchError(
        `acquire semaphore ${what}: the holder of slot ${seen.slot} was granted its permit with limit ${mismatch}, this client uses ${limit}: ` +
          `every client of a semaphore must use the same limit (${summary})`,
        votes,
        reported,
        mismatch,
        limit,
      ),
    };
  }
  let answered = 0;
  for (const v of votes) if (v.reason === 'ok' || v.reason === 'contended') answered++;
  if (answered < quorum) {
    return {
      ok: false,
      error: new QuorumUnavailableError(`acquire semaphore ${what}: too few nodes answered the slot read (${summary})`, votes, reported),
    };
  }
  const candidates: number[] = [];
  for (let slot = 0; slot < limit; slot++) if (free[slot]! >= quorum) candidates.push(slot);
  if (candidates.length < permits) {
    const owner = holder?.['owner'] ? ` (one holder: ${JSON.stringify(holder['owner'])})` : '';
    return {
      ok: false,
      error: new LockContendedError(
        `acquire semaphore ${what}: ${candidates.length} of ${limit} slots free on a quorum, ${permits} wanted${owner} (${summary})`,
        votes,
        reported,
        holder,
      ),
    };
  }
  return { ok: true, free: candidates };
}
