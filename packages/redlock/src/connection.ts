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

/** A SHA no script has: `SCRIPT EXISTS` of it answers [0] on Redis (see NodeConnection.proxySafe). */
const NO_SHA = '0'.repeat(40);

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
 * - Until it is known to be behind a proxy (see proxySafe), the handshake ends with one more
 *   round trip, `SCRIPT EXISTS <a SHA no script has>`, written once PING was answered.
 */
export class NodeConnection extends EventEmitter {
  status: ConnectionStatus = 'connecting';
  /**
   * The node is reached through a proxy that does not serve the whole command set (twemproxy
   * closes the client's socket, without a reply, on SCRIPT, MULTI/EXEC, WATCH, plain TIME and
   * INFO, SUBSCRIBE, QUIT…; another proxy may answer an error): the lock core then sends it only
   * key commands and EVAL/EVALSHA with at least one key (node.ts). Set from the start by the URL's
   * `?proxy=twemproxy`, or found by the handshake's last step: Redis answers `SCRIPT EXISTS` of a
   * SHA no script has with [0]; an error reply, any other reply (a proxy answering for the
   * servers: the fast probe's proof, grant-group.ts, would mean nothing there), or the socket
   * closing with that step unanswered after PING was answered, set it. Sticky for the life of
   * this object: a proxy keeps our socket across its upstream's restarts, and asking again would
   * cost a closed socket per reconnection. Set wrongly (a direct server that dies exactly between
   * the two replies) it only costs speed: everything a proxy-safe node is sent is also what a
   * client passed in gets, argued safe in the same places.
   */
  get proxySafe(): boolean {
    return this.behindProxy;
  }
  private behindProxy: boolean;
  /** The socket whose handshake's SCRIPT EXISTS is written and unanswered: its close means a proxy. */
  private detecting: Socket | null = null;
  private socket: Socket | null = null;
  private readonly waiting: Array<Waiting | undefined> = [];
  private head = 0;
  private attempts = 0;
  private retryTimer: NodeJS.Timeout | null = null;

  constructor(private readonly address: NodeAddress) {
    super();
    this.behindProxy = address.proxy !== undefined;
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

  /** QUIT (answered within 250 ms or not; not to a proxy, which may close on it), then close for good. */
  async close(): Promise<void> {
    if (this.status === 'end') return;
    if (this.status === 'ready' && !this.behindProxy) {
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
    const timer = setTimeout(() => {
      // Silence is not a proxy's answer (a stalled server): an error, and no proxySafe from it.
      if (this.detecting === socket) this.detecting = null;
      socket.destroy(new Error(`connect timed out after ${CONNECT_TIMEOUT_MS} ms`));
    }, CONNECT_TIMEOUT_MS);
    timer.unref();
    socket.once(tls ? 'secureConnect' : 'connect', () => this.handshake(socket, timer));
    // A reset while the handshake's SCRIPT EXISTS is unanswered is the proxy's answer (see 'close').
    socket.on('error', (err: Error) => {
      if (this.detecting !== socket) this.emit('error', err);
    });
    socket.once('close', () => {
      clearTimeout(timer);
      if (this.socket !== socket) return;
      this.socket = null;
      const proxy = this.detecting === socket;
      this.detecting = null;
      this.failAll(new Error('Connection closed'));
      if (this.status === 'end') return;
      this.status = 'reconnecting';
      if (proxy) {
        // PING was answered on this socket and SCRIPT EXISTS closed it: twemproxy. Not an error:
        // connect again at once, without that step (see proxySafe).
        this.behindProxy = true;
        this.retryTimer = setTimeout(() => {
          this.retryTimer = null;
          this.connect();
        }, 0);
        return;
      }
      this.retryTimer = setTimeout(() => {
        this.retryTimer = null;
        this.connect();
      }, reconnectDelayMs(++this.attempts));
    });
  }

  /**
   * AUTH and SELECT (when the URL has them), then PING, as one write; then, while proxySafe is not
   * known, SCRIPT EXISTS (see proxySafe); ready when all answered. Each step of the first write
   * names itself in the error of a failed attempt (the socket is then closed and retried).
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
      if (this.behindProxy) this.becomeReady(socket, timer);
      else this.detectProxy(socket, timer);
    };
    socket.write(Buffer.concat(steps.map((step) => encodeCommand(step))));
    for (const step of steps) this.waiting.push({ resolve: answered, reject: fail(String(step[0])) });
  }

  /**
   * The handshake's last step, written only once PING was answered on this socket, so that a close
   * now is an answer to it and nothing else (twemproxy may drop the replies written before an
   * unsupported command along with the socket): `SCRIPT EXISTS` of a SHA no script has.
   */
  private detectProxy(socket: Socket, timer: NodeJS.Timeout): void {
    if (this.socket !== socket) return;
    this.detecting = socket;
    socket.write(encodeCommand(['SCRIPT', 'EXISTS', NO_SHA]));
    const settle = (direct: boolean) => {
      // A close settles it in the 'close' handler (detecting is cleared before failAll).
      if (this.detecting !== socket) return;
      this.detecting = null;
      if (!direct) this.behindProxy = true;
      this.becomeReady(socket, timer);
    };
    this.waiting.push({
      resolve: (reply: unknown) => settle(Array.isArray(reply) && reply.length === 1 && reply[0] === 0),
      reject: () => settle(false),
    });
  }

  private becomeReady(socket: Socket, timer: NodeJS.Timeout): void {
    if (this.socket !== socket) return;
    clearTimeout(timer);
    this.attempts = 0;
    this.status = 'ready';
    this.emit('ready');
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
