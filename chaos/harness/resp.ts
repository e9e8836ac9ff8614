/**
 * An incremental parser of RESP requests (arrays of bulk strings, the only form ioredis sends),
 * for the skew proxy: it splits a client's byte stream into whole commands.
 */
export class RespRequestParser {
  private buffer: Buffer = Buffer.alloc(0);

  /** Feed bytes; returns the complete commands they finish (each as its arguments). Throws on a malformed stream. */
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

function readLine(buf: Buffer, from: number): { text: string; next: number } | null {
  const end = buf.indexOf('\r\n', from, 'latin1');
  if (end < 0) return null;
  return { text: buf.toString('latin1', from, end), next: end + 2 };
}

function parseCommand(buf: Buffer): { args: Buffer[]; length: number } | null {
  if (buf.length === 0) return null;
  if (buf[0] !== 0x2a /* '*' */) throw new Error(`not a RESP array (${JSON.stringify(buf.toString('latin1', 0, 16))})`);
  const head = readLine(buf, 1);
  if (!head) return null;
  const count = Number(head.text);
  if (!Number.isInteger(count) || count < 0) throw new Error(`bad RESP array length ${head.text}`);
  const args: Buffer[] = [];
  let pos = head.next;
  for (let i = 0; i < count; i++) {
    if (pos >= buf.length) return null;
    if (buf[pos] !== 0x24 /* '$' */) throw new Error('RESP array element is not a bulk string');
    const len = readLine(buf, pos + 1);
    if (!len) return null;
    const size = Number(len.text);
    if (!Number.isInteger(size) || size < 0) throw new Error(`bad RESP bulk length ${len.text}`);
    if (len.next + size + 2 > buf.length) return null;
    args.push(buf.subarray(len.next, len.next + size));
    pos = len.next + size + 2;
  }
  return { args, length: pos };
}

/** Encode a command as a RESP array of bulk strings. */
export function encodeCommand(args: readonly Buffer[]): Buffer {
  const parts: Buffer[] = [Buffer.from(`*${args.length}\r\n`, 'latin1')];
  for (const arg of args) parts.push(Buffer.from(`$${arg.length}\r\n`, 'latin1'), arg, Buffer.from('\r\n', 'latin1'));
  return Buffer.concat(parts);
}
