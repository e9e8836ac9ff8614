import { deliver, type Outbound, type Reply } from './outbound';
import { replyText, type ScriptCall } from './resp';

/** A call that a batch may merge with others of its kind (see ScriptGroup). */
export interface Mergeable {
  /** The call on its own: what a batch of one sends. */
  readonly single: ScriptCall;
}

/** How the members of one batch become one script call whose reply holds one answer per member, in order. */
export type MergeCalls<M extends Mergeable> = (members: readonly M[]) => ScriptCall;

/**
 * A run of calls of one kind that one LockNode queues back to back in one batch (one tick of the
 * event loop), sent as ONE script call: a Lua call's fixed cost (and the reads a kind can share,
 * see fence-many.lua) paid once per run instead of once per call. At concurrency 64 a node's batch
 * holds runs of dozens: the continuations of one socket read release their locks one after another.
 * The group is the batch's one Outbound for the run: queued where its first member was, its bytes
 * built when the batch is written. A call of the kind that comes after any other command starts a
 * new group (LockNode.sendMerged), so the merged call stands exactly where its members stood: no
 * command of the connection is reordered.
 *
 * What each kind's merged script must keep, and release-group.ts / fence-group.ts argue: every
 * member does exactly what its own call did, in the order the members were issued, atomically
 * (nothing else runs between members, which separate calls back to back could not promise either
 * way: only other clients' commands could have run there).
 *
 * NOSCRIPT (a SCRIPT FLUSH, a restart): the whole call is sent again as EVAL, as a single call
 * was, at the end of the batch being built when the reply arrives: after plain commands queued
 * behind it (which never fail with NOSCRIPT), exactly as for a single call (LockNode.sendScript).
 * That is the one reordering, and it is the one the single-call path always had: it can only
 * delay a compare-and-delete or a confirmation, and every attempt has a token of its own (after a
 * release answered at a quorum, this client's next SET there may meet its old key: a contended
 * vote on that node, liveness only; release-round.ts).
 * A failure fails every member, each voting `error` as its own failed call did.
 */
export class ScriptGroup<M extends Mergeable> implements Outbound {
  /** The batch's length right after this group was queued: a call joins only while it is unchanged (LockNode.sendMerged). */
  endsAt = -1;
  private readonly members: M[] = [];
  private readonly replies: Reply[] = [];
  private call: ScriptCall | null = null;

  /**
   * `resend` sends one command on the node (the EVAL fall back); `settle(count)` gives back the
   * members' reserved places once the group is answered.
   */
  constructor(
    private readonly merge: MergeCalls<M>,
    private readonly resend: (payload: Buffer, reply: Reply) => void,
    private readonly settle: (count: number) => void,
  ) {}

  /** Add a call whose place (maxPendingPerNode) the caller reserved. */
  add(member: M, reply: Reply): void {
    if (this.call) throw new Error('script group already written');
    this.members.push(member);
    this.replies.push(reply);
  }

  /** Nothing to add when the batch is written: the members are the call (see payload()). */
  seal(): void {}

  payload(): Buffer {
    return this.script().evalshaPayload();
  }

  resolve(value: unknown): void {
    this.answer(null, replyText(value));
  }

  reject(err: Error): void {
    if (err.message.startsWith('NOSCRIPT')) {
      // The script cache is empty: the same call with its source. Commands after this one on the
      // connection fall back in reply order too (see LockNode.sendScript).
      this.resend(this.script().evalPayload(), (err2, value) => this.answer(err2, value));
      return;
    }
    this.answer(err, undefined);
  }

  private script(): ScriptCall {
    return (this.call ??= this.members.length === 1 ? this.members[0]!.single : this.merge(this.members));
  }

  private answer(err: Error | null, value: unknown): void {
    const count = this.members.length;
    this.settle(count);
    if (!err && count === 1) {
      deliver(this.replies[0]!, null, value);
      return;
    }
    if (!err && !(Array.isArray(value) && value.length === count)) {
      err = new Error(`${this.call?.script.name ?? 'merged call'}: expected ${count} replies, got ${JSON.stringify(value)}`);
    }
    for (let i = 0; i < count; i++) deliver(this.replies[i]!, err, err ? undefined : (value as unknown[])[i]);
  }
}
