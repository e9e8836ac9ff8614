import { EventEmitter } from 'node:events';
import { connect as connectTcp, isIP, type Socket } from 'node:net';
import { connect as connectTls } from 'node:tls';
import RedisParser from 'redis-parser';
import type { NodeAddress } from './node-url';
import type { Outbound } from './outbound';
import { encodeCommand } from './resp';

/** How long a connection attempt (TCP, TLS and the AUTH/SELECT handshake) may take. */
export const CONNECT_TIMEOUT_MS = 2_000;

/** Delay before reconnection attempt `times` (1, 2, …): 50, 100, 200, 400, then 500 ms. */
export function reconnectDelayMs(times: number): number {
  return Math.min(25 * 2 ** Math.min(times, 5), 500);
}

export type ConnectionStatus = 'connecting' | 'ready' | 'reconnecting' | 'end';

/** A command written and waiting for its reply, first in first out. */
type Waiting = Pick<Outbound, 'resolve' | 'reject'>;

/**
 * The lock core's own connection to a node it was given as a URL: a socket, the RESP2 parser of
 * redis-parser (the one ioredis 5 ships), and the FIFO of commands waiting for their replies. It
 * exists so the hot path writes the prebuilt bytes of one tick's commands in ONE write with one
 * small queue entry each, through nothing private of anyone's (ioredis's public pipelines for
 * this path cost 3.6× the time per lock and 8× the client CPU at c=64: docs/architecture.md).
 *
 * Semantics the protocol relies on, and which this keeps:
 * - Order: bytes go out in the order write() is called, and Redis answers a connection's commands
 *   in order, so the n-th reply belongs to the n-th waiting command (one FIFO per socket).
 * - No offline queue, no resending: a command written while the connection is not ready fails at
 *   once; commands in flight when the socket closes fail with "Connection closed" and are never
 *   sent again on the next connection (a failed attempt's release must not overtake its SET, and
 *   nothing piles up behind a dead node). The caller's round deadline bounds every wait.
 * - A reply with no command waiting for it is emitted as 'push' (a subscriber connection's
 *   messages: `['message', channel, payload]`, and the confirmations of a SUBSCRIBE past its first;
 *   the console's live events read keyspace notifications this way). The lock protocol's
 *   connections never subscribe, so Redis never sends them one: their replies pair with their
 *   commands in order exactly as before, and with no 'push' listener an unsolicited reply is
 *   dropped, as it always was.
 * - 'ready' is emitted on every (re)connection once AUTH and SELECT (when the URL has them) and a
 *   PING succeeded: a server that refuses the connection (maxclients, protected mode) or is still
 *   loading its data (LOADING) is not ready, and the attempt is retried; 'error' for socket and
 *   handshake errors; 'end' once close() was called. Reconnection backs off (reconnectDelayMs).
 */
export class NodeConnection extends EventEmitter {
  status: ConnectionStatus = 'connecting';
  private socket: Socket | null = null;
  private readonly waiting: Array<Waiting | undefined> = [];
  private head = 0;
  private attempts = 0;
  private retryTimer: NodeJS.Timeout | null = null;

  constructor(private readonly address: NodeAddress) {
    super();
    // Connect on the next tick, after the caller attached its listeners (as ioredis does).
    process.nextTick(() => this.connect());
  }

  /** Write these commands as one write; each gets its reply (or error) through resolve/reject. */
  write(batch: readonly Outbound[]): void {
    const socket = this.socket;
    if (this.status !== 'ready' || !socket?.writable) {
      const err = new Error(`Connection is not ready (${this.status})`);
      for (const command of batch) command.reject(err);
      return;
    }
    if (batch.length === 1) {
      socket.write(batch[0]!.payload());
    } else {
      const parts = new Array<Buffer>(batch.length);
      for (let i = 0; i < batch.length; i++) parts[i] = batch[i]!.payload();
      socket.write(Buffer.concat(parts));
    }
    for (let i = 0; i < batch.length; i++) this.waiting.push(batch[i]!);
  }

  /** One command as a promise (script loading, maintenance): replies as the parser gives them. */
  call(...args: Array<string | number>): Promise<unknown> {
    return new Promise((resolve, reject) => this.write([{ payload: () => encodeCommand(args), resolve, reject }]));
  }

  /** QUIT (answered within 250 ms or not), then close for good. */
  async close(): Promise<void> {
    if (this.status === 'end') return;
    if (this.status === 'ready') {
      await Promise.race([this.call('QUIT').catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 250).unref())]);
    }
    this.disconnect();
  }

  /** Close at once, for good: commands in flight fail with "Connection closed". */
  disconnect(): void {
    if (this.status === 'end') return;
    this.status = 'end';
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.socket?.destroy();
    this.failAll(new Error('Connection closed'));
    this.emit('end');
  }

  private connect(): void {
    if (this.status === 'end') return;
    const { host, port, tls } = this.address;
    // SNI takes host names only (an IP literal there is deprecated); the certificate is still checked against the IP.
    const socket = tls ? connectTls({ host, port, ...(isIP(host) === 0 ? { servername: host } : {}) }) : connectTcp({ host, port });
    this.socket = socket;
    socket.setNoDelay(true);
    socket.setKeepAlive(true, 30_000);
    const parser = new RedisParser({
      returnBuffers: false,
      stringNumbers: false,
      returnReply: (reply: unknown) => {
        const waiting = this.shift();
        if (waiting) waiting.resolve(reply);
        else this.emit('push', reply);
      },
      returnError: (err: Error) => this.shift()?.reject(err),
      // A protocol error: nothing after it can be matched to its command any more.
      returnFatalError: (err: Error) => {
        this.emit('error', err);
        socket.destroy();
      },
    });
    socket.on('data', (chunk: Buffer) => parser.execute(chunk));
    const timer = setTimeout(() => socket.destroy(new Error(`connect timed out after ${CONNECT_TIMEOUT_MS} ms`)), CONNECT_TIMEOUT_MS);
    timer.unref();
    socket.once(tls ? 'secureConnect' : 'connect', () => this.handshake(socket, timer));
    socket.on('error', (err: Error) => this.emit('error', err));
    socket.once('close', () => {
      clearTimeout(timer);
      if (this.socket !== socket) return;
      this.socket = null;
      this.failAll(new Error('Connection closed'));
      if (this.status === 'end') return;
      this.status = 'reconnecting';
      this.retryTimer = setTimeout(() => {
        this.retryTimer = null;
        this.connect();
      }, reconnectDelayMs(++this.attempts));
    });
  }

  /**
   * AUTH and SELECT (when the URL has them), then PING, as one write; ready when all answered. Each
   * step names itself in the error of a failed attempt (the socket is then closed and retried).
   */
  private handshake(socket: Socket, timer: NodeJS.Timeout): void {
    const { username, password, db } = this.address;
    const steps: Array<Array<string | number>> = [];
    if (password !== null) steps.push(username !== null ? ['AUTH', username, password] : ['AUTH', password]);
    if (db !== 0) steps.push(['SELECT', db]);
    steps.push(['PING']);
    let left = steps.length;
    let failed = false;
    const fail = (step: string) => (err: Error) => {
      if (failed || this.socket !== socket) return;
      failed = true;
      const what = step === 'AUTH' ? 'authentication failed' : step === 'SELECT' ? `SELECT ${db} failed` : 'the node did not answer PING';
      this.emit('error', new Error(`${what}: ${err.message}`));
      socket.destroy();
    };
    const answered = () => {
      if (--left > 0 || failed) return;
      clearTimeout(timer);
      this.attempts = 0;
      this.status = 'ready';
      this.emit('ready');
    };
    socket.write(Buffer.concat(steps.map((step) => encodeCommand(step))));
    for (const step of steps) this.waiting.push({ resolve: answered, reject: fail(String(step[0])) });
  }

  private shift(): Waiting | undefined {
    if (this.head >= this.waiting.length) return undefined;
    const next = this.waiting[this.head];
    this.waiting[this.head++] = undefined;
    // Compact once the consumed prefix dominates (amortised O(1) per reply).
    if (this.head === this.waiting.length) {
      this.waiting.length = 0;
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.waiting.length) {
      this.waiting.splice(0, this.head);
      this.head = 0;
    }
    return next;
  }

  private failAll(err: Error): void {
    const pending = this.waiting.splice(this.head);
    this.waiting.length = 0;
    this.head = 0;
    for (const command of pending) command?.reject(err);
  }
}
