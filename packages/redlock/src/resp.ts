import type { LuaScript } from './scripts';

/**
 * One script invocation, serialized to RESP once and sent as the same bytes to every node (the
 * hot path would otherwise build and encode the same 20-odd arguments N times over).
 */
export class ScriptCall {
  readonly script: LuaScript;
  /** `$<len>\r\n<numKeys>\r\n` then each key and argument as a bulk string. */
  private readonly body: string;
  private readonly count: number;
  private evalsha: Buffer | null = null;

  /** `args`: the `numKeys` keys, then ARGV. */
  constructor(script: LuaScript, numKeys: number, args: readonly (string | number)[]);
  /** `args` already encoded (bulkStrings()): `count` arguments, the `numKeys` keys first. */
  constructor(script: LuaScript, numKeys: number, args: string, count: number);
  constructor(script: LuaScript, numKeys: number, args: readonly (string | number)[] | string, count = 0) {
    this.script = script;
    if (typeof args === 'string') {
      this.body = bulk(String(numKeys)) + args;
      this.count = count + 3;
      return;
    }
    this.body = bulk(String(numKeys)) + bulkStrings(args);
    this.count = args.length + 3;
  }

  /** EVALSHA <sha> …, built on first use and shared. */
  evalshaPayload(): Buffer {
    return (this.evalsha ??= Buffer.from(`*${this.count}\r\n$7\r\nEVALSHA\r\n$40\r\n${this.script.sha}\r\n${this.body}`, 'utf8'));
  }

  /** EVAL <source> …, for the NOSCRIPT fall back. */
  evalPayload(): Buffer {
    return Buffer.from(`*${this.count}\r\n$4\r\nEVAL\r\n${bulk(this.script.source)}${this.body}`, 'utf8');
  }
}

/** Arguments as RESP bulk strings, back to back (a part of a command, see ScriptCall). */
export function bulkStrings(args: readonly (string | number)[]): string {
  let text = '';
  for (let i = 0; i < args.length; i++) text += bulk(String(args[i]));
  return text;
}

function bulk(value: string): string {
  return `$${Buffer.byteLength(value, 'utf8')}\r\n${value}\r\n`;
}

/** One plain command (not a script), serialized to RESP. */
export function encodeCommand(args: readonly (string | number)[]): Buffer {
  return Buffer.from(encodeCommandText(args), 'utf8');
}

function encodeCommandText(args: readonly (string | number)[]): string {
  let text = `*${args.length}\r\n`;
  for (let i = 0; i < args.length; i++) text += bulk(String(args[i]));
  return text;
}

/** A reply as text: Buffers (raw replies) decoded as UTF-8, arrays element by element. */
export function replyText(reply: unknown): unknown {
  if (Buffer.isBuffer(reply)) return reply.toString('utf8');
  if (Array.isArray(reply)) return reply.map(replyText);
  return reply;
}

/** The arguments of one RESP command (an array of bulk strings, as encodeCommand writes it). */
export function decodeCommand(payload: Buffer): Buffer[] {
  let pos = 0;
  const line = (): number => {
    const end = payload.indexOf(13, pos);
    const value = Number(payload.toString('latin1', pos + 1, end));
    pos = end + 2;
    return value;
  };
  if (payload[0] !== 42) throw new Error('not a RESP command');
  const count = line();
  const args = new Array<Buffer>(count);
  for (let i = 0; i < count; i++) {
    const size = line();
    args[i] = payload.subarray(pos, pos + size);
    pos += size + 2;
  }
  return args;
}

/**
 * An integer reply of 1 (or 0): a number, or its decimal text from a client passed in with the
 * ioredis `stringNumbers` option. Only where the command's reply is an integer.
 */
export function isOne(reply: unknown): boolean {
  return reply === 1 || reply === '1';
}

export function isZero(reply: unknown): boolean {
  return reply === 0 || reply === '0';
}
