/**
 * The tooling's one RESP reader and writer: the chaos harness's proxies (command-proxy.ts,
 * skew-proxy.ts, stall-proxy.ts) and the test proxies (test/support/command-proxy.ts,
 * sticky-proxy.ts) split byte streams with it. The lock core has its own encoder
 * (packages/redlock/src/resp.ts): it is a published package and imports nothing of the project.
 */

/** Bytes that are not RESP2 (a RESP3 type, a bad length, a request that is not an array of bulk strings). */
export class RespFormatError extends Error {
  override readonly name = 'RespFormatError';
}

const CR = 0x0d;

/** Where the line starting at `at` ends (its CR), or −1 when its CRLF has not arrived. */
function lineEnd(buf: Buffer, at: number): number {
  const cr = buf.indexOf(CR, at);
  return cr < 0 || cr + 1 >= buf.length ? -1 : cr;
}

function lengthAt(buf: Buffer, at: number, cr: number, what: string): number {
  const text = buf.toString('latin1', at + 1, cr);
  const n = Number(text);
  if (text === '' || !Number.isInteger(n) || n < -1) throw new RespFormatError(`bad ${what} length ${JSON.stringify(text)}`);
  return n;
}

/**
 * The end of the RESP2 value starting at `at` (simple string, error, integer, bulk string, array),
 * or −1 while `buf` does not hold all of it. Throws RespFormatError on anything else.
 */
export function respValueEnd(buf: Buffer, at: number): number {
  if (at >= buf.length) return -1;
  const type = buf[at]!;
  const cr = lineEnd(buf, at + 1);
  if (cr < 0) return -1;
  const after = cr + 2;
  switch (type) {
    case 0x2b /* + */:
    case 0x2d /* - */:
    case 0x3a /* : */:
      return after;
    case 0x24 /* $ */: {
      const len = lengthAt(buf, at, cr, 'bulk');
      if (len < 0) return after;
      return after + len + 2 <= buf.length ? after + len + 2 : -1;
    }
    case 0x2a /* * */: {
      const count = lengthAt(buf, at, cr, 'array');
      let end = after;
      for (let i = 0; i < count; i++) {
        end = respValueEnd(buf, end);
        if (end < 0) return -1;
      }
      return end;
    }
    default:
      throw new RespFormatError(`not a RESP2 type: ${JSON.stringify(String.fromCharCode(type))}`);
  }
}

/** The arguments of the complete command at the start of `buf` (an array of bulk strings) and its length, or null while incomplete. */
function parseCommand(buf: Buffer): { args: Buffer[]; length: number } | null {
  if (buf.length === 0) return null;
  if (buf[0] !== 0x2a) throw new RespFormatError(`not a RESP array (${JSON.stringify(buf.toString('latin1', 0, 16))})`);
  const length = respValueEnd(buf, 0);
  if (length < 0) return null;
  const headEnd = buf.indexOf(CR, 1);
  const count = Number(buf.toString('latin1', 1, headEnd));
  const args: Buffer[] = [];
  let pos = headEnd + 2;
  for (let i = 0; i < count; i++) {
    if (buf[pos] !== 0x24) throw new RespFormatError('RESP array element is not a bulk string');
    const cr = buf.indexOf(CR, pos);
    const size = Number(buf.toString('latin1', pos + 1, cr));
    if (size < 0) throw new RespFormatError('a null bulk string in a command');
    args.push(buf.subarray(cr + 2, cr + 2 + size));
    pos = cr + 2 + size + 2;
  }
  return { args, length };
}

/**
 * An incremental parser of RESP requests (arrays of bulk strings, the only form ioredis sends):
 * it splits a client's byte stream into whole commands.
 */
export class RespRequestParser {
  private buffer: Buffer = Buffer.alloc(0);

  /** Feed bytes; returns the complete commands they finish (each as its arguments). Throws RespFormatError on a malformed stream. */
  push(chunk: Buffer): Buffer[][] {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    const out: Buffer[][] = [];
    for (;;) {
      const parsed = parseCommand(this.buffer);
      if (!parsed) break;
      out.push(parsed.args);
      this.buffer = this.buffer.subarray(parsed.length);
    }
    return out;
  }
}

/** Encode a command as a RESP array of bulk strings. */
export function encodeCommand(args: readonly Buffer[]): Buffer {
  const parts: Buffer[] = [Buffer.from(`*${args.length}\r\n`, 'latin1')];
  for (const arg of args) parts.push(Buffer.from(`$${arg.length}\r\n`, 'latin1'), arg, Buffer.from('\r\n', 'latin1'));
  return Buffer.concat(parts);
}
