import 'server-only';
import { MAX_BODY_BYTES } from '../http/request-checks';
import { matchLockService, type LockServiceRoute } from './routes';

/**
 * A strict reader of the one kind of HTTP/1.1 request the lean lock-service connection answers
 * itself (lean-connection.ts): `POST` to a lock-service path, a body of at most MAX_BODY_BYTES
 * framed by exactly one Content-Length, and headers in the plainest form the RFC allows. Anything
 * else, malformed or merely unusual, is `foreign`: the connection is handed to Node's own HTTP
 * server (llhttp) *before a byte of that request is consumed*, and Node parses it from its first
 * byte. So each request is parsed by exactly one parser, and this one only accepts requests whose
 * framing no HTTP/1.1 parser can read differently (no Transfer-Encoding, no duplicate or
 * malformed Content-Length, no obs-fold, no bare CR or LF, no obs-text, no duplicate header, no
 * Proxy-Connection; a Content-Length or Connection value with nothing but spaces after it): there
 * is no request this reader frames that llhttp or a proxy in front would frame otherwise, which is
 * what request smuggling needs. test/unit/lean-request-differential.test.ts holds it to that: on
 * 100,000 generated framings, every request taken here is read by llhttp the same, ending at the
 * same byte, with the same keep-alive.
 *
 * Not accepted here, all left to Node: HTTP/1.0 and other versions, other methods and paths,
 * `Expect`, `Upgrade`, a `Connection` other than keep-alive or close, heads over MAX_HEAD_BYTES or
 * MAX_HEADERS lines, bodies over the limit (Node's path answers 413 as every route does), and a body
 * over MAX_WAITED_BODY_BYTES that has not all arrived with its head: so a connection here holds at
 * most ~12 KiB of a request that is still arriving, less than Node's own 16 KiB head limit.
 */
export const MAX_HEAD_BYTES = 8 * 1024;
/** The largest body the lean reader waits for when it is not all there yet (lock-service bodies are far smaller). */
export const MAX_WAITED_BODY_BYTES = 4 * 1024;
const MAX_HEADERS = 64;

export interface LeanRequest {
  route: Exclude<LockServiceRoute, { kind: 'wrong-method' }>;
  /** Header names in lower case; each name at most once. */
  headers: Map<string, string>;
  body: Buffer;
  /** The client asked for `Connection: close`. */
  close: boolean;
  /** The bytes the request took from the buffer (head and body). */
  size: number;
}

/** `needed`: the bytes the whole request takes once its head is read (0 while the head is incomplete). */
export type ReadResult = { kind: 'incomplete'; needed: number } | { kind: 'foreign' } | ({ kind: 'request' } & LeanRequest);

const INCOMPLETE: ReadResult = Object.freeze({ kind: 'incomplete', needed: 0 });
const FOREIGN: ReadResult = Object.freeze({ kind: 'foreign' });
/** The request line of every lock-service route starts with one of these (routes.ts): anything else is foreign from its first bytes. */
const PREFIXES = ['POST /api/locks', 'POST /api/semaphores', 'POST /api/rwlocks'].map((p) => Buffer.from(p, 'latin1'));
const VERSION = ' HTTP/1.1';
const CRLF_CRLF = Buffer.from('\r\n\r\n', 'latin1');

/** tchar of RFC 9110 §5.6.2, upper case refused too (a header name is compared lower-cased). */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9a-zA-Z]+$/;
/** A field value of visible ASCII, spaces and tabs only (no obs-text, no control characters). */
const VALUE = /^[\t\x20-\x7e]*$/;
/** A Content-Length as it follows the colon: optional whitespace, 1–7 digits, optional spaces (no tab: llhttp refuses one there). */
const CONTENT_LENGTH = /^[ \t]*\d{1,7} *$/;
/** A Connection this reader takes, as it follows the colon (no tab after it, as for Content-Length). */
const CONNECTION = /^[ \t]*(?:keep-alive|close) *$/i;
/** A request target of visible ASCII only. */
const TARGET = /^[\x21-\x7e]+$/;

/** Read the request at the start of `buf` (see above); `incomplete` until all of it is there. */
export function readLeanRequest(buf: Buffer): ReadResult {
  // Decide on the first bytes whether this can be ours at all, without waiting for the whole head.
  if (!PREFIXES.some((p) => buf.compare(p, 0, Math.min(buf.length, p.length), 0, Math.min(buf.length, p.length)) === 0)) return FOREIGN;
  const headEnd = buf.indexOf(CRLF_CRLF, 0);
  if (headEnd < 0) return buf.length > MAX_HEAD_BYTES ? FOREIGN : INCOMPLETE;
  if (headEnd > MAX_HEAD_BYTES) return FOREIGN;
  const lines = buf.toString('latin1', 0, headEnd).split('\r\n');
  const requestLine = lines[0]!;
  if (!requestLine.endsWith(VERSION)) return FOREIGN;
  const target = requestLine.slice(5, requestLine.length - VERSION.length);
  if (!TARGET.test(target)) return FOREIGN;
  const route = matchLockService('POST', target);
  if (!route || route.kind === 'wrong-method') return FOREIGN;
  if (lines.length - 1 > MAX_HEADERS) return FOREIGN;
  const headers = new Map<string, string>();
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    // A bare CR or LF inside the head, or an obs-fold continuation line: not ours.
    if (line.includes('\r') || line.includes('\n')) return FOREIGN;
    const colon = line.indexOf(':');
    if (colon <= 0) return FOREIGN;
    const name = line.slice(0, colon);
    if (!TOKEN.test(name)) return FOREIGN;
    const raw = line.slice(colon + 1);
    const value = raw.replace(/^[ \t]+|[ \t]+$/g, '');
    if (!VALUE.test(value)) return FOREIGN;
    const key = name.toLowerCase();
    if (headers.has(key)) return FOREIGN;
    // llhttp reads a Content-Length's number itself: spaces may follow it, a tab may not (a trim
    // would read `0<TAB>` as 0 where Node answers 400). Only the form both read alike.
    if (key === 'content-length' && !CONTENT_LENGTH.test(raw)) return FOREIGN;
    // Likewise llhttp sees no `close` token in `close<TAB>` (it keeps the connection).
    if (key === 'connection' && !CONNECTION.test(raw)) return FOREIGN;
    headers.set(key, value);
  }
  // Proxy-Connection: llhttp reads it as Connection (a `close` there ends the connection).
  if (
    !headers.has('host') ||
    headers.has('transfer-encoding') ||
    headers.has('expect') ||
    headers.has('upgrade') ||
    headers.has('proxy-connection')
  )
    return FOREIGN;
  const connection = headers.get('connection')?.toLowerCase();
  if (connection !== undefined && connection !== 'keep-alive' && connection !== 'close') return FOREIGN;
  const length = headers.get('content-length');
  if (length === undefined || !/^\d{1,7}$/.test(length)) return FOREIGN;
  const bodyLength = Number(length);
  if (bodyLength > MAX_BODY_BYTES) return FOREIGN;
  const size = headEnd + CRLF_CRLF.length + bodyLength;
  if (buf.length < size) {
    // A large body not all here yet is Node's to read: its path authenticates before it reads a
    // body, so an anonymous sender cannot make this connection hold more than a small request.
    return bodyLength > MAX_WAITED_BODY_BYTES ? FOREIGN : { kind: 'incomplete', needed: size };
  }
  return {
    kind: 'request',
    route,
    headers,
    body: buf.subarray(headEnd + CRLF_CRLF.length, size),
    close: connection === 'close',
    size,
  };
}
