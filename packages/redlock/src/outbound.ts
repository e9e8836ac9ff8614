import type { RedlockClientCommand } from './client';
import { decodeCommand, replyText } from './resp';

/**
 * How a LockNode's commands reach a node. Each is a prebuilt RESP payload and a place for its
 * reply. On connections the lock core opened itself the commands of one tick go out as ONE write
 * (connection.ts); on clients passed in, through the client seam (client.ts: ioredis 5/6,
 * node-redis 5), in the order issued.
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
 * Call back from inside a client's reply handler without letting an exception of ours (or of an
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

/** The commands of one tick as a client adapter takes them (client.ts): decoded arguments, answers to each Outbound. */
export function toClientCommands(batch: readonly Outbound[]): RedlockClientCommand[] {
  const commands = new Array<RedlockClientCommand>(batch.length);
  for (let i = 0; i < batch.length; i++) {
    const outbound = batch[i]!;
    commands[i] = {
      args: decodeCommand(outbound.payload()),
      settle: (err, value) => (err ? outbound.reject(err) : outbound.resolve(value)),
    };
  }
  return commands;
}
