import fc from 'fast-check';
import { readLeanRequest, type LeanRequest } from '../../lib/server/lock-service/http1-request';
import { parseAsNode, type NodeParse, type ParsedRequest } from './llhttp';

/**
 * The lean reader (lib/server/lock-service/http1-request.ts) against Node's own parser (llhttp, as
 * `node:http`'s server sets it up: test/support/llhttp.ts) on generated framings: request lines,
 * header names and values with tabs, spaces, obs-fold, CR/LF variants, Content-Length and
 * Transfer-Encoding in every form (signs, leading zeros, duplicates, lists, huge numbers), bodies
 * shorter or longer than declared, pipelined requests. The lean connection reads requests off the
 * front of its buffer until one is not its own (`foreign`), then hands the rest to Node's parser.
 * That is safe only if, for every byte string:
 *
 * 1. each request the lean reader takes, Node's parser reads the same (method, target, version,
 *    headers, body, keep-alive), at the same place in the stream: given exactly the bytes the lean
 *    reader took, Node reads those requests and nothing is left half-read;
 * 2. handing the rest to Node gives what Node alone would have made of the whole stream;
 * 3. a head the lean reader took and whose body it waits for is one Node would also wait on.
 *
 * Any disagreement fails, with the bytes (fast-check shrinks them).
 */

/** The lean connection's reading of `bytes`: its requests, and why it stopped. */
function leanRead(bytes: Buffer): { requests: LeanRequest[]; offset: number; stop: 'foreign' | 'waiting-head' | 'waiting-body' | 'close' } {
  const requests: LeanRequest[] = [];
  let offset = 0;
  for (;;) {
    const read = readLeanRequest(bytes.subarray(offset));
    if (read.kind === 'foreign') return { requests, offset, stop: 'foreign' };
    if (read.kind === 'incomplete') return { requests, offset, stop: read.needed > 0 ? 'waiting-body' : 'waiting-head' };
    requests.push(read);
    offset += read.size;
    if (read.close) return { requests, offset, stop: 'close' };
  }
}

/** A lean request as Node would report it. */
function asNode(request: LeanRequest, bytes: Buffer, offset: number): ParsedRequest {
  const line = bytes.toString('latin1', offset, bytes.indexOf('\r\n', offset));
  return {
    method: 'POST',
    url: line.slice(5, line.length - ' HTTP/1.1'.length),
    version: '1.1',
    headers: [...request.headers],
    body: Buffer.from(request.body),
    keepAlive: !request.close,
    upgrade: false,
  };
}

export function comparable(requests: readonly ParsedRequest[]) {
  return requests.map((r) => ({ ...r, headers: r.headers.map(([n, v]) => [n.toLowerCase(), v]), body: r.body.toString('latin1') }));
}

function sameRequest(a: ParsedRequest, b: ParsedRequest): boolean {
  if (a.method !== b.method || a.url !== b.url || a.version !== b.version || a.keepAlive !== b.keepAlive || a.upgrade !== b.upgrade)
    return false;
  if (a.answeredByNode !== b.answeredByNode || a.headers.length !== b.headers.length || !a.body.equals(b.body)) return false;
  return a.headers.every(([name, value], i) => name.toLowerCase() === b.headers[i]![0].toLowerCase() && value === b.headers[i]![1]);
}

function same(a: readonly ParsedRequest[], b: readonly ParsedRequest[]): boolean {
  return a.length === b.length && a.every((r, i) => sameRequest(r, b[i]!));
}

/** Undefined when the two agree; otherwise what differs. */
export function disagreement(bytes: Buffer): string | undefined {
  return compare(bytes).found;
}

/** The comparison, and how many requests the lean reader took (the test counts them, to show it reaches that side). */
export function compare(bytes: Buffer): { taken: number; found?: string } {
  const lean = leanRead(bytes);
  const taken = lean.requests.length;
  const found = differs(bytes, lean);
  return found === undefined ? { taken } : { taken, found };
}

function differs(bytes: Buffer, lean: ReturnType<typeof leanRead>): string | undefined {
  // Nothing taken and no head awaiting its body: Node reads every byte from the first, alone.
  if (lean.requests.length === 0 && lean.stop !== 'waiting-body') return undefined;
  const whole = parseAsNode(bytes);
  const mine: ParsedRequest[] = [];
  let at = 0;
  for (const request of lean.requests) {
    mine.push(asNode(request, bytes, at));
    at += request.size;
  }
  // 1. Node on the whole stream reads the lean requests first, the same…
  if (!same(whole.requests.slice(0, mine.length), mine))
    return `the lean reader took ${JSON.stringify(comparable(mine))}; Node read ${JSON.stringify(comparable(whole.requests))} (${whole.end} ${whole.code ?? ''})`;
  // …and on exactly the bytes the lean reader took, those and nothing half-read.
  if (mine.length > 0) {
    const taken = parseAsNode(bytes.subarray(0, lean.offset));
    const expected = lean.stop === 'close' ? 'closed' : 'clean';
    if (!same(taken.requests, mine) || taken.end !== expected)
      return `on the ${lean.offset} bytes the lean reader took, Node read ${taken.requests.length} request(s) and ended ${taken.end} ${taken.code ?? ''}`;
  }
  // 2. The handoff: Node from the lean reader's offset reads what Node reads there on the whole stream.
  if (lean.stop === 'foreign' && mine.length > 0) {
    const rest = parseAsNode(bytes.subarray(lean.offset));
    const wholeRest: NodeParse = { ...whole, requests: whole.requests.slice(mine.length) };
    if (!same(rest.requests, wholeRest.requests) || rest.end !== wholeRest.end)
      return `handed over at ${lean.offset}: Node read ${rest.requests.length} more and ended ${rest.end}, on the whole stream ${wholeRest.requests.length} and ${wholeRest.end}`;
  }
  // 3. A head taken, its body awaited: Node waits too (it neither refused nor finished it).
  if (lean.stop === 'waiting-body' && (whole.end !== 'partial' || whole.requests.length !== mine.length))
    return `the lean reader waits for a body; Node ended ${whole.end} ${whole.code ?? ''} after ${whole.requests.length} request(s)`;
  return undefined;
}

// ---- the generator -------------------------------------------------------------------------
//
// fast-check draws a 32-bit seed per stream; a small PRNG turns it into a stream (fast-check's own
// combinators cost ~1 ms a stream here: 100,000 would take minutes). A failure is replayed from
// fast-check's seed and path, and `smallest` cuts the bytes down to the lines that still disagree.

type Rng = () => number;

function rng(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    // mulberry32
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * How often a part of the request at hand takes an unusual form (drawn per request): a request
 * drawn cold is plain or nearly, one drawn hot is odd everywhere. Without it, the thirty-odd parts
 * of a request would almost never be usual all at once, and the lean reader would almost never
 * take one.
 */
let heat = 0.05;
const HEATS = [0, 0.005, 0.02, 0.05, 0.15, 0.4];

/** `usual`, or (with the current heat's probability) one of `others`. */
function mostly<T>(r: Rng, usual: T, others: readonly T[]): T {
  return r() < heat ? others[Math.floor(r() * others.length)]! : usual;
}
const any = <T>(r: Rng, items: readonly T[]): T => items[Math.floor(r() * items.length)]!;
const chance = (r: Rng, p: number) => r() < p;
/** Something usual most of the time, less so the hotter the request. */
const usually = (r: Rng, p: number) => r() < Math.max(p, 1 - 4 * heat);

const EOLS = ['\n', '\r', '\r\r\n', ' \r\n', '\t\r\n', '\r \n', '\n\r'];
const eol = (r: Rng) => mostly(r, '\r\n', EOLS);
const BEFORE_VALUE = ['', '\t', '  ', ' \t', '\t ', '\x0b', '\f'];
const AFTER_VALUE = [' ', '\t', '  ', ' \t', '\t ', '\x0b', '\f', '\x00', '\x7f', '\xa0'];

/** A number the way a Content-Length could spell it; `n` is the body's true length. */
function number(r: Rng, n: number): string {
  return chance(r, 0.6) ? String(n) : chance(r, 0.5) ? String(Math.floor(r() * 60)) : any(r, ['0', '1', '2', '7']);
}
function contentLength(r: Rng, n: number): string {
  if (usually(r, 0.6)) return String(n);
  const k = () => number(r, n);
  return any(r, [
    () => `0${k()}`,
    () => `00${k()}`,
    () => `+${k()}`,
    () => `-${k()}`,
    () => `${k()}, ${k()}`,
    () => `${k()},${k()}`,
    () => `${k()},`,
    () => `,${k()}`,
    () => `${k()} ${k()}`,
    () => `${k()}\t${k()}`,
    () => `${k()}.0`,
    () => `${k()}e0`,
    () => `0x${k()}`,
    () => `${k()}\u00b9`,
    () => `\u0660${k()}`,
    () => `${k()}\x00`,
    () => '',
    () => '99999999999999999999',
    () => '18446744073709551616',
    () => '18446744073709551615',
    () => '4294967296',
    () => '9007199254740993',
    () => '1000000',
    () => '65537',
    () => '9999999',
    () => '10000000',
  ])();
}
const TRANSFER_ENCODINGS = [
  'chunked',
  'Chunked',
  'CHUNKED',
  'gzip, chunked',
  'chunked, gzip',
  'gzip,chunked',
  'identity',
  'gzip',
  '',
  'chunked;q=1',
  'x-chunked',
];
const CONNECTIONS = [
  'keep-alive',
  'close',
  'Close',
  'CLOSE',
  'Keep-Alive',
  'upgrade',
  'Upgrade',
  'keep-alive, close',
  'close, keep-alive',
  'close,',
  'te',
  '',
  'keep-alive, upgrade',
  'keep-alive,',
];
const TEXT_UNITS = ['a', ' ', '\t', ':', ',', ';', '"', '\\', '=', '\x80', '\xff', '%', '\x7f', '\x00', '\x01', '\r', '\n'];
function text(r: Rng): string {
  if (chance(r, 0.5)) return 'v';
  if (chance(r, 0.5)) return any(r, ['a b', 'a\tb', 'caf\u00e9', 'a\x7fb', 'a\x00b', '', ' ', 'a\rb', 'a\nb', 'a\r\n b', 'a\r\n\tb']);
  let out = '';
  for (let i = Math.floor(r() * 7); i > 0; i--) out += any(r, TEXT_UNITS);
  return out;
}

const NAMES = {
  host: ['host', 'HOST', 'Host ', ' Host', 'H\u00f6st', 'Host\t'],
  type: ['content-type', 'Content-type'],
  length: ['content-length', 'CONTENT-LENGTH', 'Content_Length', 'Content-Length\x00', 'Content Length', 'Content-Length '],
  te: ['transfer-encoding', 'Transfer_Encoding', 'TRANSFER-ENCODING', 'Transfer-Encoding '],
  connection: ['connection', 'Proxy-Connection'],
  other: ['x-b', 'X@A', 'X A', 'X\x7fA', 'X-\u00e9', '', 'X-A:', '\tX-A', 'X-A\r'],
} as const;

/** One header line: `name: value` with the spacing, colon and line end drawn too. */
function line(r: Rng, name: string, value: string): string {
  const before = mostly(r, ' ', BEFORE_VALUE);
  const after = mostly(r, '', AFTER_VALUE);
  const colon = mostly(r, '', [' ', '\t']);
  return `${name}${colon}:${before}${value}${after}${eol(r)}`;
}

const TARGETS = [
  '/api/locks?x=1',
  '/api/locks#f',
  '/api/locks/r%ZZ/release',
  '/api/locks/r/force-release',
  'http://h/api/locks',
  'http://h/api/locks/r/release',
  '/api/locks/r/release?a=%20',
  '/api/locks\x7f',
  '/api/locks/\u00e9/release',
  '/api/locks/r/release\x00',
  '/api/lockss',
  '/api/locks/',
  '/api/locks//release',
  '*',
];
const BODIES = ['', '{}', 'POST /api/locks HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}', '0\r\n\r\n', 'GET / HTTP/1.1\r\n\r\n'];

/** One request: mostly a plain lock-service request, each part now and then in an unusual form. */
function request(r: Rng): string {
  heat = any(r, HEATS);
  let body = usually(r, 0.7) ? '{"resource":"r","ttlMs":1000}' : chance(r, 0.5) ? any(r, BODIES) : '';
  if (body === '') for (let i = Math.floor(r() * 12); i > 0; i--) body += any(r, ['a', '\r', '\n', ' ', '0', 'P']);
  const n = Buffer.byteLength(body, 'latin1');
  const target = usually(r, 0.85)
    ? any(r, ['/api/locks', '/api/locks', '/api/locks/r-1/release', '/api/locks/a%2Fb/extend'])
    : any(r, TARGETS);
  let head =
    mostly(r, 'POST', ['GET', 'post', 'PUT', 'POST\x00', 'PRI']) +
    mostly(r, ' ', ['  ', '\t', '']) +
    target +
    mostly(r, ' HTTP/1.1', [
      ' HTTP/1.0',
      ' HTTP/1.10',
      ' http/1.1',
      ' HTTP/2.0',
      ' HTTP/1.2',
      ' HTTP/01.1',
      '  HTTP/1.1',
      '\tHTTP/1.1',
      ' HTTP/1.1 ',
    ]) +
    eol(r);
  const lines: string[] = [];
  if (usually(r, 0.92)) lines.push(line(r, mostly(r, 'Host', NAMES.host), mostly(r, 'console.test', ['x', '', 'a b', 'x:80'])));
  if (usually(r, 0.85)) lines.push(line(r, mostly(r, 'Content-Type', NAMES.type), 'application/json'));
  if (usually(r, 0.92)) lines.push(line(r, mostly(r, 'Content-Length', NAMES.length), contentLength(r, n)));
  if (chance(r, 0.7)) lines.push(line(r, 'Authorization', 'Bearer k'));
  for (let extra = chance(r, 0.35) ? Math.floor(r() * 4) : 0; extra > 0; extra--) {
    const kind = Math.floor(r() * 17);
    if (kind < 4) lines.push(line(r, mostly(r, 'Transfer-Encoding', NAMES.te), any(r, TRANSFER_ENCODINGS)));
    else if (kind < 7) lines.push(line(r, mostly(r, 'Content-Length', NAMES.length), contentLength(r, n)));
    else if (kind < 10) lines.push(line(r, mostly(r, 'Connection', NAMES.connection), any(r, CONNECTIONS)));
    else if (kind < 11) lines.push(line(r, mostly(r, 'Host', NAMES.host), any(r, ['console.test', 'other', ''])));
    else if (kind < 12) lines.push(line(r, any(r, ['Expect', 'Upgrade']), any(r, ['100-continue', 'websocket', 'x'])));
    else if (kind < 15) lines.push(line(r, mostly(r, 'X-A', NAMES.other), text(r)));
    // An obs-fold continuation of the line before, or a line that is no header at all.
    else lines.push(`${any(r, [' folded', '\tfolded', 'NoColon', ' ', ':x'])}${eol(r)}`);
  }
  // Usually in this order; now and then shuffled.
  if (chance(r, 0.2)) lines.sort(() => r() - 0.5);
  head += lines.join('') + eol(r);
  if (!usually(r, 0.9)) body = `${n.toString(16)}\r\n${body}\r\n0\r\n\r\n`;
  return head + body;
}

/** One to three requests, what may sit between them, and now and then a start of another. */
export function stream(seed: number): Buffer {
  const r = rng(seed);
  let out = '';
  for (let i = 1 + Math.floor(r() * r() * 3.5); i > 0; i--) out += request(r) + mostly(r, '', ['\r\n', '\n', ' ']);
  out += mostly(r, '', ['G', 'GET / HTTP/1.1\r\n', 'POST /api/locks HTTP/1.1\r\nHost: x\r\n']);
  return Buffer.from(out, 'latin1');
}

const SEEDS = fc.integer({ min: 0, max: 0xffffffff });
export const STREAM = SEEDS.map(stream);

/** The bytes cut down, line by line, to those that still disagree (a readable counterexample). */
export function smallest(bytes: Buffer): Buffer {
  let lines = bytes.toString('latin1').split(/(?<=\n)/);
  for (let i = lines.length - 1; i >= 0; i--) {
    const fewer = [...lines.slice(0, i), ...lines.slice(i + 1)];
    if (disagreement(Buffer.from(fewer.join(''), 'latin1')) !== undefined) lines = fewer;
  }
  return Buffer.from(lines.join(''), 'latin1');
}
