import { Redis } from 'ioredis';
import { SUBSCRIBER_OPTIONS } from './client-options';
import type { RedlockClient, RedlockSubscription, SubscriptionHandlers } from './client';
import { subscribeIoredis } from './client-ioredis';
import { NodeConnection } from './connection';
import { parseNodeUrl } from './node-url';
import { LeanCall, LeanSlot, SlotBatch, toClientCommands, type BatchReplies, type Outbound, type Reply } from './outbound';

export type { BatchReplies, Reply } from './outbound';
import type { ScriptCall } from './resp';
import { ScriptGroup, type MergeCalls, type Mergeable } from './script-group';
import { nodeLabel } from './node-label';
import { ALL_SCRIPTS, PROBE_SCRIPT } from './scripts';
import type { RedlockSettings } from './settings';

/**
 * Commands of one batch that share what is sent after them (grant-group.ts: the grants of one
 * tick share one epoch read and one fence register read). seal() runs when the batch is written.
 */
export interface BatchGroup {
  seal(): void;
}

export class NodeBacklogError extends Error {
  override readonly name = 'NodeBacklogError' as const;
}

/** The node let a round's whole deadline pass unanswered and has not answered since. */
export class NodeStalledError extends Error {
  override readonly name = 'NodeStalledError' as const;
}

export function ignoreReply(): void {
  // The caller already has its answer (see LockNode.callRelease).
}

function isNoScript(err: unknown): boolean {
  return err instanceof Error && err.message.startsWith('NOSCRIPT');
}

/**
 * The wire to one Redis master: its connection (the core's own for a URL, or the client passed in,
 * through its adapter: client.ts), the batch of commands written together, a bound on the commands
 * in flight, and the stall mark. Scripts run by their precomputed SHA (EVALSHA) with a fall back to
 * EVAL on NOSCRIPT. What the lock protocol keeps per node on top of it is LockNode (node.ts).
 */
export class NodeWire {
  /** Position in the Redlock's node list (0-based), for its arrays. */
  readonly index: number;
  /** The node's number in votes, events and errors: index + 1 (see votes.ts). */
  readonly number: number;
  readonly label: string;
  /** The client passed in, through its adapter (client.ts); null when the node was given as a URL (the core's own connection). */
  readonly client: RedlockClient | null;
  /** The core's own connection (connection.ts); null for a client passed in. */
  readonly connection: NodeConnection | null;
  /** Commands sent and not yet answered. */
  pending = 0;
  private batch: Outbound[] = [];
  /** The groups of the batch being collected (see BatchGroup), sealed when it is written. */
  private groups: Map<unknown, BatchGroup> | null = null;
  protected readonly maxPending: number;
  /** A round that waited this long (nodeTimeoutMs) for this node without an answer marks it stalled. */
  private readonly stallAfterMs: number;
  /** Commands settled (answered, failed or rejected): progress, counted without reading a clock. */
  protected settled = 0;
  /** `settled` when the node was marked stalled; −1 while it is not. */
  private stalledAt = -1;
  private readonly url: string | null;
  /** Until the first connection attempt of the core's own connection settles: commands wait for it. */
  protected booting: Promise<void> | null = null;
  constructor(
    index: number,
    target: string | RedlockClient,
    maxPending: number,
    stallAfterMs = Infinity,
    writeCoalescing: RedlockSettings['writeCoalescing'] = 'tick',
  ) {
    this.index = index;
    this.scheduleFlush = writeCoalescing === 'io' ? () => setImmediate(this.flush) : () => process.nextTick(this.flush);
    this.number = index + 1;
    this.label = nodeLabel(target);
    this.maxPending = maxPending;
    this.stallAfterMs = stallAfterMs;
    if (typeof target === 'string') {
      this.url = target;
      this.client = null;
      const connection = (this.connection = new NodeConnection(parseNodeUrl(target)));
      connection.on('error', (err: Error) => this.connectionError(err));
      // Load the scripts on every (re)connection, before any EVALSHA of ours: NOSCRIPT becomes
      // rare (a SCRIPT FLUSH), and the EVAL fallback keeps working when it happens. Never the
      // probe: it is loaded only by a check (see scripts/probe.lua), which is what makes a
      // successful fast probe prove that the process was checked.
      connection.on('ready', () => {
        // Not through a proxy that closes on SCRIPT: each script's first EVALSHA falls back to EVAL.
        if (connection.proxySafe) return;
        for (const script of ALL_SCRIPTS) {
          if (script !== PROBE_SCRIPT) connection.call('SCRIPT', 'LOAD', script.source).catch(() => undefined);
        }
      });
      this.booting = new Promise<void>((resolve) => {
        const settle = () => {
          connection.off('ready', settle).off('error', settle).off('end', settle);
          this.booting = null;
          resolve();
        };
        connection.on('ready', settle).on('error', settle).on('end', settle);
      });
    } else {
      this.url = null;
      this.client = target;
      this.connection = null;
    }
    const onReady = () => this.connectionReady();
    if (this.connection) this.connection.on('ready', onReady);
    else this.client!.onReady(onReady);
  }

  /** Is the node's connection up (ready for commands)? */
  get ready(): boolean {
    return this.connection ? this.connection.status === 'ready' : this.client!.isReady();
  }

  /**
   * When the current connection became ready (performance.now()); 0 before the first. A failed
   * attempt names the node in cleanupPending when this moved during the attempt (protocol.ts): on a
   * new connection a client may re-send what the old one left unanswered (a client passed in keeps
   * ioredis's autoResendUnfulfilledCommands; the core's own connections have it off).
   */
  readySince = 0;

  /** The core's own connection failed (the Redlock reports it as a node error). */
  protected connectionError(_err: Error): void {
    // Nobody to tell at this level.
  }

  /** A connection became ready (the first or a new one). */
  protected connectionReady(): void {
    this.readySince = performance.now();
  }

  /** One command counted in flight like any other, but never refused (it must follow what it guards). */
  protected sendUntracked(payload: Buffer, reply: Reply): void {
    this.pending++;
    this.command(payload, (err, value) => {
      this.pending--;
      this.settled++;
      reply(err, value);
    });
  }

  /**
   * Run a script on this node; `reply` gets its answer or error. Fails at once when too many
   * commands are in flight here (a partitioned node must not accumulate commands without bound);
   * the caller's round deadline bounds the wait otherwise. Callbacks, not promises, on the hot
   * path: a promise and its continuations per node per operation were a tenth of the client CPU.
   */
  call(call: ScriptCall, reply: Reply): void {
    if (this.refuse(1, reply)) return;
    // Counted from now, also while the first connection attempt is still under way.
    this.pending++;
    if (this.booting) void this.booting.then(() => this.sendScript(call, reply));
    else this.sendScript(call, reply);
  }

  /**
   * Send plain commands back to back on this node's connection (they run in this order, and no
   * command of ours runs in between). `reply` gets every reply, an Error standing in for each
   * command that failed; it only gets an error itself when the node refused the batch (backlog).
   */
  callBatch(commands: readonly Buffer[], reply: Reply): void {
    if (this.refuse(commands.length, reply)) return;
    this.pending += commands.length;
    if (this.booting) void this.booting.then(() => this.sendBatch(commands, reply));
    else this.sendBatch(commands, reply);
  }

  /**
   * call() for a call that the batch merges with the others of its kind into one script call
   * (script-group.ts; each kind's module argues why merging keeps the guarantees). `kind` names
   * the group (one per kind and batch); `merge` builds the merged call.
   */
  callMerged<M extends Mergeable>(kind: unknown, merge: MergeCalls<M>, member: M, reply: Reply): void {
    if (this.refuse(1, reply)) return;
    this.pending++;
    this.sendMerged(kind, merge, member, reply);
  }

  protected sendMerged<M extends Mergeable>(kind: unknown, merge: MergeCalls<M>, member: M, reply: Reply): void {
    // Still connecting: on its own, after the commands sent before it (the rare case).
    if (this.booting) {
      void this.booting.then(() => this.sendScript(member.single, reply));
      return;
    }
    // Only a run of calls of one kind with nothing queued between them is merged: the merged call
    // stands exactly where its members stood, so no command is reordered. (A group queued earlier
    // in the batch must not take a later call: a failed attempt decided within one microtask drain,
    // e.g. by backlog refusals, issues its cleanup after its own SET in the same batch, and the
    // cleanup must run after that SET.)
    const groups = (this.groups ??= new Map<unknown, BatchGroup>());
    let group = groups.get(kind) as ScriptGroup<M> | undefined;
    if (!group || group.endsAt !== this.batch.length) {
      group = new ScriptGroup<M>(
        merge,
        (payload, answer) => this.command(payload, answer),
        (count) => {
          this.pending -= count;
          this.settled++;
        },
      );
      groups.set(kind, group);
      this.enqueue(group);
      group.endsAt = this.batch.length;
    }
    group.add(member, reply);
  }

  /**
   * The group `key` of the batch being collected, made by `create` on first use. Its seal() runs
   * just before the batch is written, and may add commands at the batch's end (reserve() them).
   */
  groupOf<G extends BatchGroup>(key: unknown, create: () => G): G {
    const groups = (this.groups ??= new Map<unknown, BatchGroup>());
    let group = groups.get(key) as G | undefined;
    if (!group) groups.set(key, (group = create()));
    return group;
  }

  /** Still connecting for the first time (commands sent now wait for it). */
  get connecting(): boolean {
    return this.booting !== null;
  }

  /**
   * Count `count` commands as in flight, or refuse them (false; `reply` gets NodeBacklogError) when
   * that would exceed maxPendingPerNode. Each reserved command is then sent with sendReserved().
   */
  reserve(count: number, reply: Reply): boolean {
    if (this.refuse(count, reply)) return false;
    this.pending += count;
    return true;
  }

  /** Give back `count` commands reserved with reserve() and not sent. */
  unreserve(count: number): void {
    this.pending -= count;
  }

  /** Queue one command reserved with reserve(); `reply` gets its answer (decoded as UTF-8) or error. */
  sendReserved(payload: Buffer, reply: Reply): void {
    this.command(payload, (err, value) => {
      this.pending--;
      this.settled++;
      reply(err, value);
    });
  }

  /** run() as a promise. */
  run(call: ScriptCall): Promise<unknown> {
    return new Promise((resolve, reject) => this.call(call, (err, value) => (err ? reject(err) : resolve(value))));
  }

  /** callBatch() as a promise. */
  runBatch(commands: readonly Buffer[]): Promise<BatchReplies> {
    return new Promise((resolve, reject) => this.callBatch(commands, (err, value) => (err ? reject(err) : resolve(value as BatchReplies))));
  }

  /**
   * A round waited `waitedMs` for this node and its deadline passed with our commands unanswered.
   * After a full nodeTimeoutMs the node counts as stalled until it settles any command (an answer,
   * or the connection failing them): releases stop waiting for it (see callRelease), where a
   * SIGSTOPped or blackholed master would otherwise hold every release for nodeTimeoutMs. Grants,
   * extends and fences are still sent and waited for as usual: a round decided by the others does
   * not wait for it anyway, and a node that was just healed must be able to vote at once. A
   * shorter deadline (a short lease's validity horizon) proves nothing about the node.
   */
  markStalled(waitedMs: number): void {
    if (waitedMs >= this.stallAfterMs && this.pending > 0) this.stalledAt = this.settled;
  }

  /** Stalled: see markStalled. Clears itself once the node has settled a command since. */
  protected stalled(): boolean {
    if (this.stalledAt < 0) return false;
    if (this.settled === this.stalledAt && this.pending > 0) return true;
    this.stalledAt = -1;
    return false;
  }

  /** Would `count` more commands exceed maxPending? (An idle node always takes one batch.) */
  protected refuse(count: number, reply: Reply): boolean {
    if (this.pending + count <= this.maxPending || this.pending === 0) return false;
    const err = new NodeBacklogError(`${this.pending} commands in flight on ${this.label}`);
    queueMicrotask(() => reply(err, undefined));
    return true;
  }

  private sendBatch(commands: readonly Buffer[], reply: Reply): void {
    const count = commands.length;
    const batch = new SlotBatch(count, (_, replies) => {
      this.pending -= count;
      this.settled++;
      reply(null, replies);
    });
    for (let i = 0; i < commands.length; i++) {
      this.enqueue(new LeanSlot(commands[i]!, batch, i));
    }
  }

  protected sendScript(call: ScriptCall, reply: Reply): void {
    this.command(call.evalshaPayload(), (err, value) => {
      if (err && isNoScript(err)) {
        // The script cache is empty (restart, SCRIPT FLUSH): send the source. Ordering note: the
        // scripts sent after the EVALSHA on this connection also fail with NOSCRIPT and fall
        // back in reply order, so a token's acquire script still lands before its release; a plain
        // command sent meanwhile (a one-resource grant's SET) runs before this re-sent script
        // (script-group.ts and release-round.ts say what that costs: liveness only).
        this.command(call.evalPayload(), (err2, value2) => {
          this.pending--;
          this.settled++;
          reply(err2, value2);
        });
        return;
      }
      this.pending--;
      this.settled++;
      reply(err, value);
    });
  }

  /** Queue one command; `reply` gets its answer (decoded as UTF-8) or error. */
  protected command(payload: Buffer, reply: Reply): void {
    this.enqueue(new LeanCall(payload, reply));
  }

  /**
   * Commands issued in one go (the synchronous code and promise continuations that run before the
   * next I/O or timer callback: e.g. every continuation of the replies read from one socket) are
   * written together, corked into one write: what auto-pipelining does, without a Pipeline object
   * per batch. Fewer, larger writes save syscalls on both sides.
   *
   * By default (writeCoalescing 'tick') the flush runs on process.nextTick, once that cascade of
   * continuations has drained, not in the check phase (setImmediate, as ioredis's auto-pipelining
   * does, and as writeCoalescing 'io' does for servers: see settings.ts): at concurrency 1 the extra
   * event-loop hop cost about a third of the client CPU of an acquire + release and 10–15% of its
   * p50 (a release sent while a node's grant is still in flight waited for the check phase), and
   * under load the batches stay as large (the same or better pairs/s and CPU per pair at
   * concurrency 64; `npm run bench -- --only latency,throughput`).
   * Safety: only the moment and the syscall of the write change, never what is written, to which
   * node, in which order, or how replies are counted. The batch is first in, first out, and
   * flushed whole, so commands still go out (and run) on each connection in the order they were
   * issued, which is all the protocol relies on (a failed attempt's release lands after its SET;
   * see protocol.ts); the only exception, the reads a group of grants shares, go after all of
   * them, and grant-group.ts argues that case. Mutual exclusion does not depend on write timing:
   * a grant still needs a quorum of SET NX within the validity window, measured from before the
   * first command was issued.
   */
  private enqueue(command: Outbound): void {
    this.batch.push(command);
    if (this.batch.length === 1) this.scheduleFlush();
  }

  /** process.nextTick or setImmediate of flush, by the writeCoalescing setting. */
  private readonly scheduleFlush: () => void;

  private readonly flush = (): void => {
    const groups = this.groups;
    if (groups) {
      this.groups = null;
      for (const group of groups.values()) group.seal();
    }
    const batch = this.batch;
    this.batch = [];
    if (this.connection) this.connection.write(batch);
    else this.client!.send(toClientCommands(batch));
  };

  /** Resolves once the first connection attempt of the core's own connection has settled. */
  whenBooted(): Promise<void> {
    return this.booting ?? Promise.resolve();
  }

  /** A new connection subscribed to `channel` (ioredis for a URL node, the client's own kind otherwise), owned by the caller. */
  subscribe(channel: string, handlers: SubscriptionHandlers): RedlockSubscription {
    const url = this.url;
    return url !== null
      ? subscribeIoredis(() => new Redis(url, { ...SUBSCRIBER_OPTIONS }), channel, handlers)
      : this.client!.subscribe(channel, handlers);
  }

  /** Close the connection if the lock core opened it. */
  async close(): Promise<void> {
    await this.connection?.close();
  }
}
