/**
 * One proxied TCP connection: a client socket, its upstream socket (opened at once, or on heal for
 * connections accepted during a blackhole), and one ordered {@link Direction} queue each way.
 * Closes cross like TCP: FIN after the data before it, RST/error/refusal as an abort; in a
 * blackhole not even a close crosses until healed.
 *
 * A connection has at most one upstream, ever: when that upstream goes away (the node dies, is
 * shut down or restarted, or the proxy is pointed elsewhere) the client connection is closed, so a
 * client can never be answered by a process other than the one it was talking to. redis-server
 * never half-closes, so its FIN means the connection is gone on its side: the FIN is passed on
 * after the data before it and then the client socket is closed for good (what the client sends
 * after that FIN could only be answered with a RST by the server's kernel, and now is by ours).
 */
import type { Socket } from 'node:net';
import { Direction } from './direction';
import type { FaultMode } from './modes';

export type ConnectionSide = 'client' | 'upstream';
export type FlowDirection = 'up' | 'down';

/** What a connection needs from the proxy that owns it. */
export interface ConnectionHost {
  mode(): FaultMode;
  readonly maxBufferBytes: number;
  random(): number;
  /** A new socket connecting to the current target (allowHalfOpen). */
  connectUpstream(): Socket;
  delivered(direction: FlowDirection, bytes: number): void;
  socketError(connection: FaultConnection, side: ConnectionSide, error: Error): void;
  /** The connection is gone: both sockets are destroyed or closed, no timer is left. */
  finished(connection: FaultConnection): void;
}

/** Resets a socket with a TCP RST where it can, else destroys it. Never throws. */
export function resetSocket(socket: Socket): void {
  if (socket.destroyed) return;
  try {
    if (socket.connecting) socket.destroy();
    else socket.resetAndDestroy();
  } catch {
    socket.destroy();
  }
}

export class FaultConnection {
  private upstream: Socket | null = null;
  private upstreamConnected = false;
  private clientClosed = false;
  private upstreamClosed = false;
  /** A side that closed without FIN (RST, error, refused connect); acted on unless blackholed. */
  private broken: ConnectionSide | null = null;
  /** The proxy points at another target now: this upstream is no longer the node; acted on unless blackholed. */
  private retired = false;
  private done = false;
  private readonly up: Direction;
  private readonly down: Direction;

  constructor(
    readonly id: number,
    private readonly client: Socket,
    private readonly host: ConnectionHost,
  ) {
    this.up = new Direction('up', this, host);
    this.down = new Direction('down', this, host);
    client.setNoDelay(true);
    client.on('error', (error) => host.socketError(this, 'client', error));
    client.on('data', (data: Buffer) => this.up.push(data));
    client.on('end', () => {
      this.up.sourceEnded = true;
      this.up.pump();
    });
    client.on('drain', () => this.down.onDrain());
    client.on('close', () => this.onClose('client'));
    if (host.mode().kind !== 'blackhole') this.openUpstream();
  }

  get isFinished(): boolean {
    return this.done;
  }

  sourceOf(direction: FlowDirection): Socket | null {
    if (direction === 'up') return this.clientClosed ? null : this.client;
    return this.upstreamClosed ? null : this.upstream;
  }

  /** The socket a direction writes to, or null while it cannot be written (connecting, closed). */
  destinationOf(direction: FlowDirection): Socket | null {
    if (direction === 'down') return this.clientClosed || this.client.destroyed ? null : this.client;
    if (this.upstream === null || !this.upstreamConnected || this.upstreamClosed || this.upstream.destroyed) return null;
    return this.upstream;
  }

  /** The proxy's mode changed (never to 'reset': the proxy resets connections itself). */
  modeChanged(): void {
    if (this.done) return;
    if (this.host.mode().kind === 'blackhole') {
      this.up.hold();
      this.down.hold();
      return;
    }
    this.up.reschedule();
    this.down.reschedule();
    if (this.settle()) return;
    this.openUpstream();
    this.up.pump();
    this.down.pump();
  }

  /**
   * The proxy no longer points at this connection's upstream. A connection that has one is dropped
   * (on heal, in a blackhole), never moved to the new target; one that has none yet (accepted
   * during a blackhole, it has talked to no server) opens its first upstream to the new target.
   */
  retire(): void {
    if (this.done || this.upstream === null) return;
    this.retired = true;
    this.settle();
  }

  /** A direction has passed its FIN on and it is flushed. */
  finPassed(direction: FlowDirection): void {
    if (this.done || direction !== 'down') return;
    // The upstream closed (see the file comment): close the client for good rather than leave it
    // half-open on a connection whose server is gone.
    this.client.destroy();
  }

  /** Tears the connection down at once: RST on both sides for 'reset', else a plain destroy. */
  abort(how: 'reset' | 'destroy'): void {
    if (this.done) return;
    this.finish();
    for (const socket of [this.client, this.upstream]) {
      if (socket === null) continue;
      if (how === 'reset') resetSocket(socket);
      else socket.destroy();
    }
  }

  overflow(direction: FlowDirection, bytes: number): void {
    const error = Object.assign(
      new Error(
        `fault proxy buffer overflow: ${bytes} bytes held ${direction === 'up' ? 'client→server' : 'server→client'}` +
          ` exceed maxBufferBytes ${this.host.maxBufferBytes}; connection dropped`,
      ),
      { code: 'ERR_FAULT_PROXY_BUFFER_OVERFLOW' },
    );
    this.host.socketError(this, direction === 'up' ? 'client' : 'upstream', error);
    this.abort('destroy');
  }

  private openUpstream(): void {
    if (this.upstream !== null || this.done || this.clientClosed) return;
    const socket = this.host.connectUpstream();
    this.upstream = socket;
    socket.setNoDelay(true);
    socket.on('error', (error) => this.host.socketError(this, 'upstream', error));
    socket.on('connect', () => {
      this.upstreamConnected = true;
      this.up.pump();
    });
    socket.on('data', (data: Buffer) => this.down.push(data));
    socket.on('end', () => {
      // The server closed (redis-server never half-closes): the upstream is gone. Its FIN goes on to
      // the client after the data before it (on heal, in a blackhole), and then the client socket
      // is closed (finPassed). What the client sends meanwhile has no server to go to.
      this.down.sourceEnded = true;
      this.up.discard();
      socket.destroy();
      this.down.pump();
    });
    socket.on('drain', () => this.up.onDrain());
    socket.on('close', () => this.onClose('upstream'));
  }

  private onClose(side: ConnectionSide): void {
    if (this.done) return;
    const from = side === 'client' ? this.up : this.down; // the direction this socket feeds
    const into = side === 'client' ? this.down : this.up; // the direction that writes to it
    if (side === 'client') this.clientClosed = true;
    else this.upstreamClosed = true;
    // With allowHalfOpen, a peer that closes cleanly sends FIN ('end') first; anything else is a break.
    if (!from.sourceEnded && this.broken === null) this.broken = side;
    into.discard();
    this.settle();
  }

  /** Finishes or aborts the connection when its sockets say so. Returns true if it is gone. */
  private settle(): boolean {
    if (this.done) return true;
    const upstreamGone = this.upstream === null || this.upstreamClosed;
    if (this.clientClosed && upstreamGone) {
      this.finish();
      return true;
    }
    // In a blackhole not even a close crosses the partition: it is acted on when healed.
    if (this.host.mode().kind === 'blackhole') return false;
    if (this.broken !== null || this.retired) {
      this.abort('destroy');
      return true;
    }
    return false;
  }

  private finish(): void {
    this.done = true;
    this.up.dispose();
    this.down.dispose();
    this.host.finished(this);
  }
}
