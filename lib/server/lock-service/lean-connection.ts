import 'server-only';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { HeaderReader } from '../auth';
import { checkBodyHeaders, parseJsonBody } from '../http/request-checks';
import { HSTS } from '../http/security-headers';
import { logger } from '../logger';
import { answerLockService, type LockServiceAnswer } from './handler';
import { readLeanRequest, type LeanRequest } from './http1-request';
import { API_HEADERS } from './node-io';

/**
 * The lock service's lean HTTP/1.1 connections. Every connection to the console's port starts here:
 * while it sends only lock-service requests in their plainest form (http1-request.ts), they are
 * read and answered on the socket directly; at the first byte of any other request the connection
 * is handed to Node's HTTP server for good (Next.js, and Node's path of the lock service for
 * unusual lock-service requests), that request unread. Why: Node's HTTP layer (IncomingMessage,
 * ServerResponse, header objects, streams) cost about as much CPU per request as the lock itself;
 * issue 19's target is a lock service at a quarter of the core's own rate, on the same cores.
 *
 * One request at a time per connection, answered in order (pipelined requests wait in the buffer,
 * which is bounded: past MAX_BUFFERED bytes the socket stops being read until the answer is out).
 * Timeouts mirror Node's server settings: an idle connection closes after `keepAliveTimeoutMs`, a
 * request must arrive whole within `headersTimeoutMs` of its first byte (slow senders), and an
 * answer in progress (an acquire waiting up to its waitMs) is never cut by either.
 */
export interface LeanConnectionOptions {
  /** Give the socket to Node's HTTP server (its 'connection' listener). */
  handoff(socket: Socket): void;
  keepAliveTimeoutMs: number;
  headersTimeoutMs: number;
}

const MAX_BUFFERED = 128 * 1024;
const GONE = 'the HTTP client went away';

export class LeanConnections {
  private readonly open = new Set<LeanConnection>();
  private closing = false;

  constructor(private readonly options: LeanConnectionOptions) {}

  /** The 'connection' listener of the console's server. */
  readonly accept = (socket: Socket): void => {
    if (this.closing) return void socket.destroy();
    const connection = new LeanConnection(socket, this.options, () => this.open.delete(connection));
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
  private buffer: Buffer | null = null;
  private busy = false;
  private closeAfter = false;
  private done = false;
  /** When the request now in the buffer started arriving (performance.now()), 0 when none. */
  private partialSince = 0;
  private gone: AbortController | null = null;
  private readonly local: string;

  constructor(
    private readonly socket: Socket,
    private readonly options: LeanConnectionOptions,
    private readonly forget: () => void,
  ) {
    this.local = `${socket.localAddress ?? ''}:${socket.localPort ?? ''}`;
    socket.setNoDelay(true);
    socket.setTimeout(options.keepAliveTimeoutMs);
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
    this.socket.destroy();
  }

  private readonly onData = (chunk: Buffer): void => {
    this.buffer = this.buffer === null ? chunk : Buffer.concat([this.buffer, chunk]);
    if (this.busy) {
      if (this.buffer.length > MAX_BUFFERED) this.socket.pause();
      return;
    }
    this.pump();
  };

  private readonly onTimeout = (): void => {
    // An answer in progress (a waiting acquire) is not cut; an idle or slow connection is.
    if (!this.busy) this.socket.destroy();
  };

  private readonly onError = (): void => {
    // 'close' follows and aborts what is in flight.
  };

  private readonly onEnd = (): void => {
    // The client stopped sending (a FIN): as Node's server does (httpAllowHalfOpen off), close our
    // side too, which ends a waiting acquire ('close' aborts it) instead of holding a lock for
    // a client that has left.
    this.socket.end();
  };

  private readonly onClose = (): void => {
    this.done = true;
    this.gone?.abort(new Error(GONE));
    this.forget();
  };

  /** Answer the complete requests at the front of the buffer, one at a time. */
  private pump(): void {
    while (!this.busy && !this.done && this.buffer !== null) {
      const read = readLeanRequest(this.buffer);
      if (read.kind === 'foreign') return this.handoff();
      if (read.kind === 'incomplete') {
        const now = performance.now();
        if (this.partialSince === 0) this.partialSince = now;
        else if (now - this.partialSince > this.options.headersTimeoutMs) this.socket.destroy();
        return;
      }
      this.partialSince = 0;
      this.buffer = read.size === this.buffer.length ? null : this.buffer.subarray(read.size);
      if (read.close) this.closeAfter = true;
      this.busy = true;
      this.answer(read).catch((err: unknown) => {
        // A failure of this connection's own (never a client's mistake: those are answers) ends
        // the connection, logged; it must not become an unhandled rejection of the process.
        logger().error({ err }, 'the lean lock-service connection failed');
        this.socket.destroy();
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
      gone: () => (this.gone = new AbortController()).signal,
    });
    this.gone = null;
    if (this.done || answer === null) return;
    this.write(answer, request.headers.get('x-forwarded-proto') === 'https');
    this.busy = false;
    if (this.closeAfter) return void this.socket.end();
    if (this.socket.isPaused()) this.socket.resume();
    this.pump();
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
      : `Connection: keep-alive\r\nKeep-Alive: timeout=${keepAliveSeconds(this.options)}\r\n`;
    this.socket.write(`${head}Content-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`);
  }

  /** Give the connection to Node's HTTP server, the unread bytes first (see the class comment). */
  private handoff(): void {
    const rest = this.buffer;
    this.buffer = null;
    this.done = true;
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
    if (rest) socket.unshift(rest);
  }
}

const DECODER = new TextDecoder();

function keepAliveSeconds(options: LeanConnectionOptions): number {
  return Math.floor(options.keepAliveTimeoutMs / 1000);
}

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
