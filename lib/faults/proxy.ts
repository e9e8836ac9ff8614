/**
 * FaultProxy: a TCP proxy in front of one redis-server whose behaviour can be switched at run time
 * (pass, blackhole, reset, latency) to simulate partitions, slow nodes and dead nodes for real.
 */
import { EventEmitter } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { FaultConnection, resetSocket, type ConnectionHost, type ConnectionSide, type FlowDirection } from './connection';
import { formatFaultMode, parseFaultMode, type FaultMode } from './modes';

export interface FaultProxyOptions {
  /** @default '127.0.0.1' */
  targetHost?: string;
  targetPort: number;
  /** @default '127.0.0.1' */
  listenHost?: string;
  /** @default 0 (any free port) */
  listenPort?: number;
  /** Used in error messages and events. @default `proxy→<targetPort>` */
  name?: string;
  /** Bound of the bytes held per connection per direction. @default 4 MiB */
  maxBufferBytes?: number;
  /** Source of jitter, in [0, 1). @default Math.random */
  random?: () => number;
}

export interface FaultProxyStats {
  /** Connections open now. */
  connections: number;
  /** Connections accepted since start (including those reset at once). */
  accepted: number;
  /** Bytes written on to the server (client → server). */
  bytesUp: number;
  /** Bytes written back to clients (server → client). */
  bytesDown: number;
  /** Connections torn down with a TCP RST by the reset mode. */
  resets: number;
  mode: FaultMode;
}

/** Payload of the 'connection-error' event: a socket error, swallowed and reported, never thrown. */
export interface FaultConnectionErrorInfo {
  proxy: string;
  /** 0 for errors of the listening server itself. */
  connectionId: number;
  side: ConnectionSide | 'server';
  error: Error;
}

export interface FaultProxyEvents {
  'connection-error': [info: FaultConnectionErrorInfo];
  'mode-change': [mode: FaultMode, previous: FaultMode];
}

export const DEFAULT_MAX_BUFFER_BYTES = 4 * 1024 * 1024;

const PASS: FaultMode = Object.freeze({ kind: 'pass' });

function checkPort(value: number, what: string, allowZero: boolean): number {
  if (!Number.isInteger(value) || value < (allowZero ? 0 : 1) || value > 65_535) {
    throw new RangeError(`fault proxy: ${what} must be an integer in [${allowZero ? 0 : 1}, 65535], got ${value}`);
  }
  return value;
}

/**
 * A switchable TCP fault proxy. Socket errors never surface as 'error' events: they are reported
 * as 'connection-error' and the affected connection is closed.
 */
export class FaultProxy extends EventEmitter<FaultProxyEvents> {
  readonly name: string;
  private readonly targetHost: string;
  private readonly listenHost: string;
  private readonly listenPort: number;
  private readonly maxBufferBytes: number;
  private readonly random: () => number;
  private target: number;
  private currentMode: FaultMode = PASS;
  private server: Server | null = null;
  private boundPort: number | null = null;
  private starting: Promise<number> | null = null;
  private closing: Promise<void> | null = null;
  private readonly connections = new Set<FaultConnection>();
  private nextId = 1;
  private accepted = 0;
  private bytesUp = 0;
  private bytesDown = 0;
  private resets = 0;
  private readonly host: ConnectionHost;

  constructor(opts: FaultProxyOptions) {
    super();
    this.target = checkPort(opts.targetPort, 'targetPort', false);
    this.listenPort = checkPort(opts.listenPort ?? 0, 'listenPort', true);
    this.targetHost = opts.targetHost ?? '127.0.0.1';
    this.listenHost = opts.listenHost ?? '127.0.0.1';
    this.name = opts.name ?? `proxy→${opts.targetPort}`;
    this.maxBufferBytes = opts.maxBufferBytes ?? DEFAULT_MAX_BUFFER_BYTES;
    if (!Number.isSafeInteger(this.maxBufferBytes) || this.maxBufferBytes < 1) {
      throw new RangeError(`fault proxy: maxBufferBytes must be a positive integer, got ${opts.maxBufferBytes}`);
    }
    this.random = opts.random ?? Math.random;
    this.host = {
      mode: () => this.currentMode,
      maxBufferBytes: this.maxBufferBytes,
      random: () => {
        const r = this.random();
        return Number.isFinite(r) ? Math.min(Math.max(r, 0), 1) : 0;
      },
      connectUpstream: () => connect({ host: this.targetHost, port: this.target, allowHalfOpen: true }),
      delivered: (direction: FlowDirection, bytes: number) => {
        if (direction === 'up') this.bytesUp += bytes;
        else this.bytesDown += bytes;
      },
      socketError: (connection, side, error) => this.reportError(connection.id, side, error),
      finished: (connection) => {
        this.connections.delete(connection);
      },
    };
  }

  /** Starts listening; resolves the bound port. Rejects (keeping `code`, e.g. EADDRINUSE) if it cannot. */
  start(): Promise<number> {
    if (this.closing) return Promise.reject(new Error(`fault proxy "${this.name}": start() after close()`));
    if (this.starting) return this.starting;
    this.starting = new Promise<number>((resolve, reject) => {
      const server = createServer({ allowHalfOpen: true, pauseOnConnect: false }, (socket) => this.accept(socket));
      const onListenError = (error: NodeJS.ErrnoException): void => {
        this.starting = null;
        const wrapped = Object.assign(
          new Error(`fault proxy "${this.name}": cannot listen on ${this.listenHost}:${this.listenPort}: ${error.code ?? error.message}`, {
            cause: error,
          }),
          { code: error.code },
        );
        reject(wrapped);
      };
      server.once('error', onListenError);
      server.listen(this.listenPort, this.listenHost, () => {
        server.off('error', onListenError);
        server.on('error', (error) => this.reportError(0, 'server', error));
        const address = server.address();
        this.server = server;
        this.boundPort = typeof address === 'object' && address !== null ? address.port : this.listenPort;
        resolve(this.boundPort);
      });
    });
    return this.starting;
  }

  /** The bound listen port. Throws before start() has resolved. */
  get port(): number {
    if (this.boundPort === null) throw new Error(`fault proxy "${this.name}" is not started`);
    return this.boundPort;
  }

  get targetPort(): number {
    return this.target;
  }

  /**
   * Points the proxy at another port. Connections opened from now on go there, and so do those
   * accepted during a blackhole that have no upstream yet (they open it on heal). Connections
   * attached to the old target are closed at once (in a blackhole, on heal): a client connection
   * is never moved to another server.
   */
  setTarget(port: number): void {
    const next = checkPort(port, 'target port', false);
    if (next === this.target) return;
    this.target = next;
    for (const connection of [...this.connections]) connection.retire();
  }

  get mode(): FaultMode {
    return this.currentMode;
  }

  /** Validates (throws FaultModeError) and applies `mode` to existing and new connections at once. */
  setMode(mode: FaultMode): void {
    const next = parseFaultMode(mode);
    const previous = this.currentMode;
    this.currentMode = next;
    if (next.kind === 'reset') {
      for (const connection of [...this.connections]) {
        this.resets++;
        connection.abort('reset');
      }
    } else {
      for (const connection of [...this.connections]) connection.modeChanged();
    }
    this.emit('mode-change', next, previous);
  }

  stats(): FaultProxyStats {
    return {
      connections: this.connections.size,
      accepted: this.accepted,
      bytesUp: this.bytesUp,
      bytesDown: this.bytesDown,
      resets: this.resets,
      mode: this.currentMode,
    };
  }

  /** Destroys every current connection, both sides (e.g. the node behind has crashed). */
  dropConnections(): void {
    for (const connection of [...this.connections]) connection.abort('destroy');
  }

  /** Stops listening and destroys every connection. Idempotent; resolves once the port is free. */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  override toString(): string {
    const where = this.boundPort === null ? 'not started' : `${this.listenHost}:${this.boundPort}`;
    return `FaultProxy(${this.name}, ${where} → ${this.targetHost}:${this.target}, ${formatFaultMode(this.currentMode)})`;
  }

  private async shutdown(): Promise<void> {
    if (this.starting) await this.starting.catch(() => undefined);
    this.dropConnections();
    const server = this.server;
    this.server = null;
    if (server === null) return;
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private accept(socket: Socket): void {
    if (this.closing) {
      socket.on('error', () => undefined);
      socket.destroy();
      return;
    }
    this.accepted++;
    if (this.currentMode.kind === 'reset') {
      socket.on('error', (error) => this.reportError(0, 'client', error));
      this.resets++;
      resetSocket(socket);
      return;
    }
    const connection = new FaultConnection(this.nextId++, socket, this.host);
    this.connections.add(connection);
  }

  private reportError(connectionId: number, side: FaultConnectionErrorInfo['side'], error: Error): void {
    this.emit('connection-error', { proxy: this.name, connectionId, side, error });
  }
}
