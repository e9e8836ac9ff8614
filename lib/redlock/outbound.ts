import type { Redis } from 'ioredis';
import { decodeCommand, replyText } from './resp';

/**
 * How a LockNode's commands reach ioredis. Each is a prebuilt RESP payload and a place for its
 * reply. On connections the lock core opened itself the commands of one tick go out as ONE write
 * of lean queue entries (writeOwned); on clients passed in, through the public callBuffer
 * (sendPublic), which works with any ioredis major the user runs.
 */
export interface Outbound {
  toWritable(stream?: unknown): string | Buffer;
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

  constructor(size: number, private readonly done: Reply) {
    this.replies = new Array<unknown>(size);
    this.remaining = size;
  }

  settle(at: number, value: unknown): void {
    if (this.replies[at] !== undefined || this.remaining === 0) return;
    this.replies[at] = value === undefined ? null : value;
    if (--this.remaining === 0) deliver(this.done, null, this.replies);
  }
}

const NO_ARGS: readonly never[] = Object.freeze([]);

/**
 * Queue entries for connections the lock core owns: just what ioredis's reply handler touches
 * (name, args, resolve, reject), no Command, no promise, no closure. Replies arrive raw (Buffers)
 * and are decoded here.
 */
export class LeanCall implements Outbound {
  readonly name = 'lean';
  readonly args = NO_ARGS;

  constructor(private readonly payload: Buffer, private readonly reply: Reply) {}

  toWritable(): Buffer {
    return this.payload;
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
  readonly name = 'lean';
  readonly args = NO_ARGS;

  constructor(private readonly payload: Buffer, private readonly batch: SlotBatch, private readonly at: number) {}

  toWritable(): Buffer {
    return this.payload;
  }

  resolve(value: unknown): void {
    this.batch.settle(this.at, replyText(value));
  }

  reject(err: Error): void {
    this.batch.settle(this.at, err);
  }
}

/** ioredis's queue of the commands written and waiting for their replies, in order. */
interface CommandQueue {
  push(item: { command: Outbound; stream?: undefined; select: number }): void;
}

/**
 * The commands of one tick on a connection the lock core opened, as ONE write: their bytes
 * concatenated, then each queued for its reply in the same order, which is what ioredis's
 * sendCommand does per command (a status check, a write, a queue entry) minus a write and a
 * Command each. Our own connections have known options (no command timeout, no offline queue, no
 * key prefix, never in subscriber mode), so nothing else of sendCommand applies; when the
 * connection is not ready every command fails at once, as sendCommand does without an offline
 * queue. The bytes and their order are exactly what sendCommand would write, so replies still
 * match commands one to one.
 */
export function writeOwned(client: Redis, batch: readonly Outbound[]): void {
  const stream = client.status === 'ready' ? client.stream : undefined;
  if (!stream?.writable) {
    const err = new Error(`Connection is not ready (${client.status})`);
    for (const command of batch) command.reject(err);
    return;
  }
  const internal = client as unknown as { commandQueue: CommandQueue; condition: { select: number } | null };
  const select = internal.condition?.select ?? 0;
  if (batch.length === 1) {
    stream.write(batch[0]!.toWritable(stream));
  } else {
    const parts = new Array<Buffer>(batch.length);
    for (let i = 0; i < batch.length; i++) parts[i] = batch[i]!.toWritable(stream) as Buffer;
    stream.write(Buffer.concat(parts));
  }
  for (let i = 0; i < batch.length; i++) internal.commandQueue.push({ command: batch[i]!, select });
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
    const [name, ...args] = decodeCommand(command.toWritable() as Buffer);
    pipeline.callBuffer(name!.toString('latin1'), ...args, (err: Error | null | undefined, value: unknown) => (err ? command.reject(err) : command.resolve(value)));
  }
  // Each command's callback has its answer; the pipeline's own promise adds nothing.
  pipeline.exec().catch(() => undefined);
}
