import type { Redis } from 'ioredis';
import { decodeCommand, replyText } from './resp';

/**
 * How a LockNode's commands reach a node. Each is a prebuilt RESP payload and a place for its
 * reply. On connections the lock core opened itself the commands of one tick go out as ONE write
 * (connection.ts); on clients passed in, through ioredis's public callBuffer (sendPublic), which
 * works with any ioredis major the user runs.
 */
export interface Outbound {
  payload(): Buffer;
  resolve(value: unknown): void;
  reject(err: Error): void;
}

/** Replies of a batch of commands, in order: each the reply or the Error it failed with. */
export type BatchReplies = unknown[];

/** Where an answer goes: the error, or null and the reply. Called once. */
export type Reply = (err: Error | null, value: unknown) => void;

/**
 * Call back from inside ioredis's reply handler without letting an exception of ours (or of an
 * event listener further down) unwind through its parser: it is rethrown on its own, as an
 * unhandled rejection would have been when this was a promise continuation.
 */
export function deliver(reply: Reply, err: Error | null, value: unknown): void {
  try {
    reply(err, value);
  } catch (thrown) {
    queueMicrotask(() => {
      throw thrown;
    });
  }
}

/** Collects the replies of one batch; calls back when every command has settled, whatever the order. */
export class SlotBatch {
  readonly replies: BatchReplies;
  private remaining: number;

  constructor(
    size: number,
    private readonly done: Reply,
  ) {
    this.replies = new Array<unknown>(size);
    this.remaining = size;
  }

  settle(at: number, value: unknown): void {
    if (this.replies[at] !== undefined || this.remaining === 0) return;
    this.replies[at] = value === undefined ? null : value;
    if (--this.remaining === 0) deliver(this.done, null, this.replies);
  }
}

/**
 * One command and where its reply goes: no Command, no promise, no closure. Replies arrive as text
 * (connection.ts) or raw Buffers (a client passed in, callBuffer) and are decoded here alike.
 */
export class LeanCall implements Outbound {
  constructor(
    private readonly bytes: Buffer,
    private readonly reply: Reply,
  ) {}

  payload(): Buffer {
    return this.bytes;
  }

  resolve(value: unknown): void {
    deliver(this.reply, null, replyText(value));
  }

  reject(err: Error): void {
    deliver(this.reply, err, undefined);
  }
}

/** One command of a batch on a connection the lock core owns. */
export class LeanSlot implements Outbound {
  constructor(
    private readonly bytes: Buffer,
    private readonly batch: SlotBatch,
    private readonly at: number,
  ) {}

  payload(): Buffer {
    return this.bytes;
  }

  resolve(value: unknown): void {
    this.batch.settle(this.at, replyText(value));
  }

  reject(err: Error): void {
    this.batch.settle(this.at, err);
  }
}

/**
 * The commands of one tick on a client passed in, through ioredis's public API only (`callBuffer`,
 * in ioredis 5 and 6 alike): each prebuilt command is decoded back into its arguments and sent in
 * order, so it goes out on the client's connection in the order issued, whatever that client's
 * version, protocol (RESP2 or RESP3) or pipelining options. Replies arrive raw and are decoded as
 * on the connections the lock core opens.
 */
export function sendPublic(client: Redis, batch: readonly Outbound[]): void {
  // One pipeline, written at once (as the corked batch of an owned connection is). Always a
  // pipeline, even for one command: a client with enableAutoPipelining loses the command name of
  // a bare callBuffer on its way into the automatic pipeline (ioredis 5 and 6 alike).
  const pipeline = client.pipeline();
  for (let i = 0; i < batch.length; i++) {
    const command = batch[i]!;
    const [name, ...args] = decodeCommand(command.payload());
    pipeline.callBuffer(name!.toString('latin1'), ...args, (err: Error | null | undefined, value: unknown) =>
      err ? command.reject(err) : command.resolve(value),
    );
  }
  // Each command's callback has its answer; the pipeline's own promise adds nothing.
  pipeline.exec().catch(() => undefined);
}
