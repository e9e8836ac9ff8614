import 'server-only';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { HeaderReader } from '../auth';
import { bodyTooLarge, checkBodyHeaders, MAX_BODY_BYTES, parseJsonBody } from './request-checks';
import { API_CSP, HSTS, STATIC_SECURITY_HEADERS } from './security-headers';

const DECODER = new TextDecoder();

/** A Node request's headers as authentication and the checks read them (names are lower case in Node). */
export function headerReader(req: IncomingMessage): HeaderReader {
  return {
    get(name: string): string | null {
      const value = req.headers[name];
      return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
    },
  };
}

/**
 * The JSON body, never more than MAX_BODY_BYTES of it: a declared Content-Length over the limit is
 * refused before a byte is read, a chunked body as soon as it passes the limit (the rest is not read:
 * the 413 closes the connection). The same rules and messages as the Next.js routes (route.ts).
 */
export function readJsonBody(req: IncomingMessage, headers: HeaderReader): Promise<unknown> {
  checkBodyHeaders(headers);
  if (req.destroyed) return Promise.reject(new Error('the HTTP client went away'));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const onData = (chunk: Buffer) => {
      total += chunk.byteLength;
      if (total > MAX_BODY_BYTES) {
        done();
        req.pause();
        reject(bodyTooLarge());
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      done();
      try {
        // TextDecoder, as the Next.js routes read bodies: it drops a leading byte-order mark.
        resolve(parseJsonBody(DECODER.decode(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total))));
      } catch (err) {
        reject(err);
      }
    };
    const onError = (err: Error) => {
      done();
      reject(err);
    };
    const onClose = () => onError(new Error('the HTTP client went away'));
    const done = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

/**
 * The security headers every API answer carries (next.config.ts gives the Next.js routes the same
 * ones), as the flat [name, value, …] list writeHead takes without building a header object per answer.
 */
export const API_SECURITY_HEADERS: readonly string[] = Object.freeze([
  ...STATIC_SECURITY_HEADERS.flatMap(({ key, value }) => [key, value]),
  'Content-Security-Policy',
  API_CSP,
]);

/** …and those of a JSON answer. */
export const API_HEADERS: readonly string[] = Object.freeze([
  ...API_SECURITY_HEADERS,
  'Content-Type',
  'application/json',
  'Cache-Control',
  'no-store',
]);

/** HSTS, as a header list, when the request came over https (a TLS-terminating proxy says so); none otherwise. */
export function hstsFor(req: IncomingMessage): string[] {
  return req.headers['x-forwarded-proto'] === 'https' ? [HSTS.key, HSTS.value] : [];
}

/**
 * Answer with a JSON body; `extra` headers last (an error's `retry-after`, `connection: close`; a
 * list is one header line per value, as Set-Cookie needs); HSTS only behind https.
 */
export function sendJson(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  body: unknown,
  extra: Record<string, string | readonly string[]> = {},
): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  const headers = [...API_HEADERS, 'Content-Length', String(Buffer.byteLength(text))];
  headers.push(...hstsFor(req));
  for (const name in extra) {
    const value = extra[name]!;
    if (typeof value === 'string') headers.push(name, value);
    else for (const one of value) headers.push(name, one);
  }
  if (extra['connection'] === 'close' && !req.complete) lingerOnClose(req);
  res.writeHead(status, headers);
  res.end(text);
}

/** How long, and for how many more bytes, a connection closed under a client still sending keeps reading. */
const LINGER_MS = 2_000;
const LINGER_BYTES = 8 * 1024 * 1024;

/**
 * A lingering close (as nginx's `lingering_close`) for an answer that closes the connection while
 * the client is still sending its body (a 413 part-way through a chunked body). Closing a socket
 * with unread bytes makes the kernel send a reset, and a reset makes the client's kernel drop what
 * the client had not read yet: the answer itself (an e2e run saw a 413 vanish so). So the socket
 * only ends (its FIN after the answer), and what the client still sends is read and dropped, for at
 * most LINGER_MS and LINGER_BYTES more, before it is destroyed. Node closes a `connection: close`
 * answer's socket through destroySoon, replaced here for this socket alone.
 */
function lingerOnClose(req: IncomingMessage): void {
  const socket = req.socket as Socket;
  socket.destroySoon = () => {
    socket.end();
    let dropped = 0;
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
    socket.on('data', (chunk: Buffer) => {
      dropped += chunk.byteLength;
      if (dropped > LINGER_BYTES) socket.destroy();
    });
    req.resume();
    socket.resume();
  };
}
