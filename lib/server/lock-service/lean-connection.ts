import 'server-only';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { HeaderReader } from '../auth';
import { checkBodyHeaders, parseJsonBody } from '../http/request-checks';
import { HSTS } from '../http/security-headers';
import { logger } from '../logger';
import { answerLockService, type LockServiceAnswer } from './handler';
import { readLeanRequest, type LeanRequest } from './http1-request';
import { API_HEADERS } from '../http/node-io';
import type { ConnectionGuard, GuardedConnection } from '../http/connection-guard';
import { CONTINUE, probeDeparture } from './departure-probe';

/**
 * The lock service's lean HTTP/1.1 connections. Every connection to the console's port starts here:
 * while it sends only lock-service requests in their plainest form (http1-request.ts), they are
 * read and answered on the socket directly; at the first byte of any other request the connection
 * is handed to Node's HTTP server for good (Next.js, and Node's path of the lock service for
 * unusual lock-service requests), that request unread. Why: Node's HTTP layer (IncomingMessage,
 * ServerResponse, header objects, streams) cost about as much CPU per request as the lock itself;
 * the target is a lock service at a quarter of the core's own rate, on the same cores.
 *
 * One request at a time per connection, answered in order (pipelined requests wait in the buffer,
 * which is bounded: past MAX_BUFFERED bytes the socket stops being read until the answer is out).
 * Every connection is first admitted by the connection guard (lib/server/http/connection-guard.ts:
 * the total and per-peer caps) and follows its limits: an idle connection closes after its idle
 * timeout (short until a principal authenticated on it), a request must arrive whole within the
 * headers timeout of its first byte (slow senders), an answer in progress (an acquire waiting up to
 * its waitMs) is never cut by either, and a refused request (401, 403, 429) is answered
 * `Connection: close` and the connection closed: a client without credentials cannot hold it.
 */
export interface LeanConnectionOptions {
  /** Give the socket to Node's HTTP server (its 'connection' listener). */
  handoff(socket: Socket): void;
  guard: ConnectionGuard;
}

/** Answers after which the connection closes: nobody authenticated, or not allowed, or too many requests. */
export const REFUSED_STATUSES: ReadonlySet<number> = new Set([401, 403, 429]);

const MAX_BUFFERED = 128 * 1024;
const GONE = 'the HTTP client went away';

export class LeanConnections {
  private readonly open = new Set<LeanConnection>();
  private closing = false;

  constructor(private readonly options: LeanConnectionOptions) {}

  /** The 'connection' listener of the console's server. */
  readonly accept = (socket: Socket): void => {
    if (this.closing) return void socket.destroy();
    const guarded = this.options.guard.admit(socket);
    if (!guarded) return; // over a cap: refused, closed
    const connection = new LeanConnection(socket, guarded, this.options, () => this.open.delete(connection));
    this.open.add(connection);
  };

  /** Stop: idle connections close now, busy ones after their answer. */
  closeIdle(): void {
    this.closing = true;
    for (const c of this.open) c.closeWhenIdle();
  }

  closeAll(): void {
    this.closing = true;
    for (const c of this.open) c.destroy();
  }

  get size(): number {
    return this.open.size;
  }
}

class LeanConnection {
  /** Bytes received and not yet consumed, as chunks (joined only when a request can be read). */
  private chunks: Buffer[] = [];
  private buffered = 0;
  /** The bytes the request at the front needs in all (its head is read), 0 while unknown. */
  private needed = 0;
  private busy = false;
  /** Answer what is in progress, then close: nothing sent after this is read, let alone run. */
  private closeAfter = false;
  /** The client sent its FIN: answer the requests it sent, then close. */
  private ended = false;
  private done = false;
  /** Runs out when the request at the front has taken longer than the headers timeout to arrive. */
  private slowTimer: NodeJS.Timeout | null = null;
  private gone: AbortController | null = null;
  /** Stops the departure probe of a waiting acquire whose client sent its FIN (departure-probe.ts). */
  private stopProbe: (() => void) | null = null;
  private readonly local: string;

  constructor(
    private readonly socket: Socket,
    private readonly guarded: GuardedConnection,
    private readonly options: LeanConnectionOptions,
    private readonly forget: () => void,
  ) {
    this.local = `${socket.localAddress ?? ''}:${socket.localPort ?? ''}`;
    socket.setNoDelay(true);
    socket.setTimeout(guarded.idleTimeoutMs);
    socket.on('data', this.onData);
    socket.on('timeout', this.onTimeout);
    socket.on('error', this.onError);
    socket.on('close', this.onClose);
    socket.on('end', this.onEnd);
  }

  closeWhenIdle(): void {
    this.closeAfter = true;
    if (!this.busy) this.destroy();
  }

  destroy(): void {
    this.done = true;
    this.socket.destroy();
  }

  private readonly onData = (chunk: Buffer): void => {
    if (this.closeAfter) return; // sent after the close was decided: dropped unread (RFC 9112 §9.6)
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    if (this.busy) {
      if (this.buffered > MAX_BUFFERED) this.socket.pause();
      return;
    }
    this.slowTimer ??= setTimeout(this.onSlow, this.options.guard.limits.headersMs).unref();
    // The head of the request at the front is read and its body is not all here yet: nothing to do.
    if (this.needed > 0 && this.buffered < this.needed) return;
    this.pump();
  };

  private readonly onSlow = (): void => {
    // The request at the front did not arrive whole within the headers timeout (a slow sender).
    this.slowTimer = null;
    if (!this.busy) this.destroy();
  };

  private readonly onTimeout = (): void => {
    // An answer in progress (a waiting acquire) is not cut; an idle connection is.
    if (!this.busy) this.destroy();
  };

  private readonly onError = (): void => {
    // 'close' follows and aborts what is in flight.
  };

  private readonly onEnd = (): void => {
    // The client stopped sending (a FIN), which is not leaving: a client may half-close after its
    // request and wait for the answer. As Node's server with httpAllowHalfOpen: answer
    // the requests it sent, then close. A waiting acquire probes whether the client is still there
    // (departure-probe.ts): one that has gone stops waiting.
    this.ended = true;
    if (this.gone) this.probe();
    if (!this.busy) this.pump();
  };

  /** An acquire waits and the client sent its FIN: find out whether it is still there (departure-probe.ts). */
  private probe(): void {
    this.stopProbe ??= probeDeparture(() => {
      if (!this.socket.destroyed) this.socket.write(CONTINUE);
    });
  }

  private readonly onClose = (): void => {
    this.done = true;
    if (this.slowTimer) clearTimeout(this.slowTimer);
    this.stopProbe?.();
    this.gone?.abort(new Error(GONE));
    this.forget();
  };

  /** The unconsumed bytes as one buffer (null when there are none). */
  private joined(): Buffer | null {
    if (this.chunks.length > 1) this.chunks = [Buffer.concat(this.chunks, this.buffered)];
    return this.chunks[0] ?? null;
  }

  /** Answer the complete requests at the front of the buffer, one at a time. */
  private pump(): void {
    while (!this.busy && !this.done && !this.closeAfter && !this.socket.destroyed) {
      const buffer = this.joined();
      // Nothing more will come after a FIN: with nothing left, or only a part of a request, close.
      if (buffer === null) return this.ended ? this.close() : undefined;
      const read = readLeanRequest(buffer);
      if (read.kind === 'foreign') return this.handoff();
      if (read.kind === 'incomplete') {
        this.needed = read.needed;
        return this.ended ? this.close() : undefined;
      }
      this.needed = 0;
      const rest = buffer.subarray(read.size);
      this.chunks = rest.length ? [rest] : [];
      this.buffered = rest.length;
      if (this.slowTimer) clearTimeout(this.slowTimer);
      this.slowTimer = rest.length ? setTimeout(this.onSlow, this.options.guard.limits.headersMs).unref() : null;
      if (read.close) this.closeAfter = true;
      this.busy = true;
      this.guarded.begin();
      this.answer(read).catch((err: unknown) => {
        // A failure of this connection's own (never a client's mistake: those are answers) ends
        // the connection, logged; it must not become an unhandled rejection of the process.
        logger().error({ err }, 'the lean lock-service connection failed');
        this.destroy();
      });
    }
  }

  private async answer(request: LeanRequest): Promise<void> {
    const headers: HeaderReader = { get: (name) => request.headers.get(name) ?? null };
    const answer = await answerLockService({
      route: request.route,
      headers,
      local: this.local,
      body: () => {
        checkBodyHeaders(headers);
        return Promise.resolve(parseJsonBody(DECODER.decode(request.body)));
      },
      gone: () => {
        this.gone = new AbortController();
        if (this.ended) this.probe();
        return this.gone.signal;
      },
    });
    this.gone = null;
    this.stopProbe?.();
    this.stopProbe = null;
    if (answer?.authenticated) this.guarded.markAuthenticated();
    this.guarded.end();
    if (this.done || this.socket.destroyed || answer === null) return;
    // Refused: the client is told so and the connection goes; it cannot hold it by asking again.
    if (REFUSED_STATUSES.has(answer.status)) this.closeAfter = true;
    this.write(answer, request.headers.get('x-forwarded-proto') === 'https');
    this.busy = false;
    this.socket.setTimeout(this.guarded.idleTimeoutMs);
    if (this.closeAfter) return this.close();
    if (this.socket.isPaused()) this.socket.resume();
    if (this.ended || this.needed === 0 || this.buffered >= this.needed) this.pump();
  }

  /** Close after the last answer, as Node's server does: nothing more is read; the socket goes once the answer is out. */
  private close(): void {
    this.chunks = [];
    this.buffered = 0;
    this.socket.off('data', this.onData);
    this.socket.end();
    this.socket.once('finish', () => this.socket.destroy());
  }

  private write(answer: LockServiceAnswer, https: boolean): void {
    const text = JSON.stringify(answer.body);
    let head = `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status] ?? ''}\r\n`;
    for (let i = 0; i < API_HEADERS.length; i += 2) head += `${API_HEADERS[i]}: ${API_HEADERS[i + 1]}\r\n`;
    if (https) head += `${HSTS.key}: ${HSTS.value}\r\n`;
    for (const name in answer.headers) {
      if (name.toLowerCase() === 'connection') this.closeAfter ||= answer.headers[name] === 'close';
      else head += `${name}: ${answer.headers[name]}\r\n`;
    }
    head += `Date: ${httpDate()}\r\n`;
    head += this.closeAfter
      ? 'Connection: close\r\n'
      : `Connection: keep-alive\r\nKeep-Alive: timeout=${Math.floor(this.guarded.idleTimeoutMs / 1000)}\r\n`;
    this.socket.write(`${head}Content-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`);
  }

  /** Give the connection to Node's HTTP server, the unread bytes first (see the class comment). */
  private handoff(): void {
    const rest = this.joined();
    this.chunks = [];
    this.buffered = 0;
    this.done = true;
    if (this.slowTimer) clearTimeout(this.slowTimer);
    this.slowTimer = null;
    const socket = this.socket;
    socket.off('data', this.onData);
    socket.off('timeout', this.onTimeout);
    socket.off('error', this.onError);
    socket.off('close', this.onClose);
    socket.off('end', this.onEnd);
    socket.setTimeout(0);
    this.forget();
    if (socket.isPaused()) socket.resume();
    // Node's listener attaches its parser and 'data' listener first; the unshifted bytes then reach
    // that parser before anything read from the socket later.
    this.options.handoff(socket);
    if (!this.ended) {
      if (rest) socket.unshift(rest);
      return;
    }
    // The client's FIN came already (it cannot be unshifted past): give Node's parser the bytes,
    // then the end, as its own listeners would have had them.
    if (rest) socket.emit('data', rest);
    socket.emit('end');
  }
}

const DECODER = new TextDecoder();

let dateSecond = -1;
let dateText = '';
/** The Date header, made once a second (as Node's own server caches it). */
function httpDate(): string {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateText = new Date(now).toUTCString();
  }
  return dateText;
}
