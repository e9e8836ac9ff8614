/**
 * A reader's look before it asks (rwlock.ts): one read of the lock's intent key and of every reader
 * slot on every node. It decides only whether a reader asks now (no writer's intent on a quorum)
 * and for which slot; whether it gets the slot is the mutex's acquire (protocol.ts), so nothing in
 * this file bears on mutual exclusion or fence order. A read out of date by the time the grant
 * runs costs a refused attempt (a slot taken meanwhile) or one reader let in past a writer's intent
 * that arrived meanwhile (fairness, not safety: the writer then waits for that reader too).
 */
import { LockContendedError, QuorumUnavailableError, SemaphoreLimitMismatchError, type RedlockError } from './errors';
import type { LockNode } from './node';
import type { ProtocolContext } from './protocol';
import { encodeCommand } from './resp';
import { Round } from './round';
import { limitMismatch } from './semaphore-slots';
import { metaTextOf, parseMetaText } from './value';
import { summarizeVotes } from './votes';

/** What a reader reads: the slots' keys and names (0 … maxReaders, one more than there are) and the intent's key. */
export interface RwReadKeys {
  readonly resource: string;
  readonly maxReaders: number;
  readonly keys: readonly string[];
  readonly names: readonly string[];
  readonly intentKey: string;
}

/** Free slots (on a quorum), or why the reader does not ask now (an attempt's error). */
export type RwReadChoice = { ok: true; free: number[] } | { ok: false; error: RedlockError };

/** What the replies showed, across nodes. */
interface Seen {
  mismatch: number | null;
  where: string;
  holder: Record<string, string> | null;
  intents: number;
  writer: Record<string, string> | null;
}

/**
 * Read slots 0 … maxReaders and the intent on every node, one batch of GETs per node within the
 * node timeout, decided early (below). Fails with SemaphoreLimitMismatchError when a live holder (or a writer's intent)
 * recorded another maxReaders, QuorumUnavailableError when fewer than a quorum answered, and
 * LockContendedError when a writer's intent is on a quorum (a writer waits: new readers let it go
 * first) or no slot is free on a quorum (a writer holds them all, or maxReaders readers hold one each).
 */
export async function readForReader(ctx: ProtocolContext, rw: RwReadKeys): Promise<RwReadChoice> {
  const { nodes, quorum } = ctx;
  const { keys, maxReaders } = rw;
  const free = new Array<number>(maxReaders).fill(0);
  const seen: Seen = { mismatch: null, where: '', holder: null, intents: 0, writer: null };
  // Decided at the quorum-th node that could grant a reader (no intent there, a slot free), or once
  // that is out of reach (an intent on a quorum refuses on more than N − quorum nodes): every reader
  // attempt reads, so a stalled node must not cost each of them the node timeout. The slots free on
  // a quorum are then found among those voters.
  const round = new Round(
    nodes,
    quorum,
    false,
    ctx.settings.nodeTimeoutMs,
    (r, i, reply) => {
      const values = Array.isArray(reply) ? (reply as unknown[]) : [reply];
      const failed = values.find((v) => v instanceof Error) as Error | undefined;
      if (failed || values.length !== keys.length + 1) {
        r.reject(i, 'error', failed ? failed.message : `unexpected reply ${JSON.stringify(values)}`);
        return;
      }
      const intent = typeof values[keys.length] === 'string' ? (values[keys.length] as string) : null;
      if (intent !== null) {
        seen.intents++;
        seen.writer ??= parseMetaText(metaTextOf(intent));
        // The intent records its writer's maxReaders: index 0 is within every limit, so only the field counts.
        noteMismatch(seen, limitMismatch(intent, 0, maxReaders), 'the waiting writer');
      }
      let freeHere = 0;
      for (let slot = 0; slot < keys.length; slot++) {
        const value = typeof values[slot] === 'string' ? (values[slot] as string) : null;
        noteMismatch(seen, limitMismatch(value, slot, maxReaders), `the holder of slot ${slot}`);
        if (slot >= maxReaders) continue;
        if (value === null) {
          free[slot]!++;
          freeHere++;
        } else {
          seen.holder ??= parseMetaText(metaTextOf(value));
        }
      }
      if (intent !== null) r.reject(i, 'contended', 'a writer waits here');
      else if (freeHere > 0) r.accept(i, freeHere);
      else r.reject(i, 'contended', `all ${maxReaders} slots held here`);
    },
    ctx.onNodeError,
  );
  // GETs, not MGET, for the ACL user's sake (semaphore-slots.ts says why); sent together, answered in order.
  const reads = [...keys, rw.intentKey].map((key) => encodeCommand(['GET', key]));
  for (let i = 0; i < nodes.length; i++) (nodes[i] as LockNode).callBatch(reads, round.reply(i));
  await round.done;
  return verdict(rw, round, seen, free, quorum);
}

function noteMismatch(seen: Seen, found: number | null, where: string): void {
  if (found === null || seen.mismatch !== null) return;
  seen.mismatch = found;
  seen.where = where;
}

function verdict(rw: RwReadKeys, round: Round, seen: Seen, free: readonly number[], quorum: number): RwReadChoice {
  const { votes } = round;
  const summary = summarizeVotes(votes);
  const what = `acquire read ${JSON.stringify(rw.resource)}`;
  const reported = rw.names.slice(0, rw.maxReaders);
  if (seen.mismatch !== null) {
    const error = new SemaphoreLimitMismatchError(
      `${what}: ${seen.where} was granted with maxReaders ${seen.mismatch}, this client uses ${rw.maxReaders}: ` +
        `every client of a read-write lock must use the same maxReaders (${summary})`,
      votes,
      reported,
      seen.mismatch,
      rw.maxReaders,
    );
    return { ok: false, error };
  }
  let answered = 0;
  for (const v of votes) if (v.reason === 'ok' || v.reason === 'contended') answered++;
  if (answered < quorum) {
    return { ok: false, error: new QuorumUnavailableError(`${what}: too few nodes answered the slot read (${summary})`, votes, reported) };
  }
  if (seen.intents >= quorum) {
    const owner = seen.writer?.['owner'] ? ` (${JSON.stringify(seen.writer['owner'])})` : '';
    const error = new LockContendedError(
      `${what}: a writer waits${owner}, readers let it go first (${summary})`,
      votes,
      reported,
      seen.writer,
    );
    return { ok: false, error };
  }
  const candidates: number[] = [];
  for (let slot = 0; slot < rw.maxReaders; slot++) if (free[slot]! >= quorum) candidates.push(slot);
  if (candidates.length === 0) {
    const owner = seen.holder?.['owner'] ? ` (one holder: ${JSON.stringify(seen.holder['owner'])})` : '';
    const error = new LockContendedError(`${what}: no reader slot free on a quorum${owner} (${summary})`, votes, reported, seen.holder);
    return { ok: false, error };
  }
  return { ok: true, free: candidates };
}
