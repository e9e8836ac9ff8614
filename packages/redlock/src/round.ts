import type { LockNode } from './node';
import type { Vote, VoteReason } from './votes';

/** Turns node i's reply into a vote: calls round.accept / round.reject. */
export type ReplyHandler = (round: Round, i: number, reply: unknown) => void;
/** Told about every failed command, also those answering after the round was decided. */
export type ErrorSink = (node: LockNode, err: Error) => void;

/**
 * One round of a lock operation on every node in parallel, with one shared deadline (one timer,
 * not one per node). It is decided as soon as
 * - `need` nodes voted for (unless `waitAll`), or
 * - `need` can no longer be reached (more than N − need against), or
 * - every node answered, or
 * - the deadline passed (unanswered nodes vote `timeout`).
 * Nodes still unanswered at an early decision vote `pending`. Replies after the decision still
 * reach the reply handler (e.g. to report a quarantine) and errors the error sink, but votes no
 * longer change: `votes` is final once `done` resolves.
 */
export class Round {
  readonly votes: Vote[];
  /** A number per node from its reply (the fence register, the count deleted…). */
  readonly values: number[];
  /** Per node, the holder's token behind a `contended` vote (internal: tokens never go into votes). */
  holders: Array<string | undefined> | null = null;
  /** Per node, the metadata text of that holder's value (null: none). */
  holderMetas: Array<string | null | undefined> | null = null;
  /** Per node, the lease ceiling it records behind a `ceiling-mismatch` vote. */
  ceilings: Array<number | undefined> | null = null;
  /** Per node, true when it voted `quarantined` for want of an epoch sentinel (never marked clean, or its data lost). */
  noSentinel: boolean[] | null = null;
  /**
   * Answers that arrive after an early decision from nodes that were still `pending` (their vote
   * stays `pending`): told to this listener, which the fence round uses to count late voters.
   */
  onLate: ((i: number, vote: Vote, value: number) => void) | null = null;
  forCount = 0;
  againstCount = 0;
  decided = false;
  /** The deadline decided the round. */
  timedOut = false;
  readonly done: Promise<void>;
  private resolveDone!: () => void;
  private timer: NodeJS.Timeout | null = null;
  private answeredCount = 0;
  private readonly timeoutMs: number;
  /** Called once: by hedge(), or if the round is still undecided after hedgeMs, on the deadline's timer. */
  private onHedge: ((round: Round) => void) | null;
  /** The timer is set for the hedge point (then re-set for the deadline). */
  private hedgeTimer: boolean;

  /**
   * `keepLate`: record the answers of nodes still pending at an early decision (lateVotes, onLate);
   * only a fenced grant needs them. `onHedge`: see hedge().
   */
  constructor(
    readonly nodes: readonly LockNode[],
    readonly need: number,
    readonly waitAll: boolean,
    timeoutMs: number,
    private readonly onReply: ReplyHandler,
    private readonly onError: ErrorSink,
    private readonly keepLate = false,
    private readonly hedgeMs = Infinity,
    onHedge: ((round: Round) => void) | null = null,
  ) {
    const n = nodes.length;
    this.votes = new Array<Vote>(n);
    this.values = new Array<number>(n).fill(0);
    this.done = new Promise<void>((resolve) => {
      this.resolveDone = resolve;
    });
    this.timeoutMs = Math.max(0, timeoutMs);
    // hedge() can always run it (a refusal, a failure); the timer only before the deadline.
    this.onHedge = onHedge;
    this.hedgeTimer = onHedge !== null && hedgeMs < this.timeoutMs;
    this.timer = setTimeout(Round.expire, this.hedgeTimer ? hedgeMs : this.timeoutMs, this);
  }

  /**
   * Run the hedge now (at most once per round; nothing once decided): what the round does when the
   * nodes it asked may not be enough, e.g. an early voter refused. Otherwise it runs at hedgeMs.
   */
  hedge(): void {
    const onHedge = this.onHedge;
    this.onHedge = null;
    if (onHedge !== null && !this.decided) onHedge(this);
  }

  /** Node i's answer, as a callback for the node's reply. */
  reply(i: number): (err: Error | null, value: unknown) => void {
    return (err, value) => {
      if (err === null) {
        this.onReply(this, i, value);
        return;
      }
      this.onError(this.nodes[i]!, err);
      // A node failing may leave the others short of the quorum: the hedge, if any, now.
      this.hedge();
      this.reject(i, 'error', err.message);
    };
  }

  /** Node i is not part of this round; it counts against. */
  skip(i: number): void {
    this.reject(i, 'not-asked');
  }

  accept(i: number, value = 0): void {
    if (this.decided) {
      if (this.keepLate) this.late(i, { node: this.nodes[i]!.number, label: this.nodes[i]!.label, vote: 'for', reason: 'ok' }, value);
      return;
    }
    if (this.votes[i]) return;
    this.votes[i] = { node: this.nodes[i]!.number, label: this.nodes[i]!.label, vote: 'for', reason: 'ok' };
    this.values[i] = value;
    this.forCount++;
    this.answeredCount++;
    this.check();
  }

  reject(i: number, reason: VoteReason, detail?: string, quarantineUntil?: number): void {
    if (this.decided ? !this.keepLate : this.votes[i]) return;
    const vote: { -readonly [K in keyof Vote]: Vote[K] } = {
      node: this.nodes[i]!.number,
      label: this.nodes[i]!.label,
      vote: 'against',
      reason,
    };
    if (detail !== undefined) vote.detail = detail;
    if (quarantineUntil !== undefined) vote.quarantineUntil = quarantineUntil;
    if (this.decided) {
      this.late(i, vote, 0);
      return;
    }
    this.votes[i] = vote;
    this.againstCount++;
    this.answeredCount++;
    this.check();
  }

  /** A node that was still pending at the decision answered: tell onLate (once per node). */
  private late(i: number, vote: Vote, value: number): void {
    if (!this.keepLate || this.votes[i]?.reason !== 'pending' || this.lateVotes?.[i]) return;
    (this.lateVotes ??= new Array<Vote | undefined>(this.nodes.length))[i] = vote;
    this.values[i] = value;
    this.onLate?.(i, vote, value);
  }

  /** The late answers so far (see onLate), by node. */
  lateVotes: Array<Vote | undefined> | null = null;

  private check(): void {
    const n = this.nodes.length;
    if (this.answeredCount === n || (!this.waitAll && (this.forCount >= this.need || this.againstCount > n - this.need))) {
      this.finish('pending');
    }
  }

  /** Decide now; unanswered nodes vote `reason`. */
  finish(reason: 'pending' | 'timeout'): void {
    if (this.decided) return;
    this.decided = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.timedOut = reason === 'timeout';
    for (let i = 0; i < this.votes.length; i++) {
      if (this.votes[i]) continue;
      this.votes[i] = { node: this.nodes[i]!.number, label: this.nodes[i]!.label, vote: 'against', reason };
      // The whole deadline passed without this node's answer (see LockNode.markStalled).
      if (reason === 'timeout') this.nodes[i]!.markStalled(this.timeoutMs);
    }
    Object.freeze(this.votes);
    this.resolveDone();
  }

  /** The timer: the hedge first when one is due, then the deadline. */
  private static expire(round: Round): void {
    if (round.hedgeTimer) {
      round.hedgeTimer = false;
      round.timer = setTimeout(Round.expire, round.timeoutMs - round.hedgeMs, round);
      round.hedge();
      return;
    }
    // Defer to the check phase: replies already read from the sockets in this loop iteration are
    // handled first, so a busy event loop does not count answered nodes as timed out.
    setImmediate(timeOut, round);
  }
}

function timeOut(round: Round): void {
  round.finish('timeout');
}
