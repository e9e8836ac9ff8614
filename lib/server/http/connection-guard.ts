import 'server-only';
import type { Socket } from 'node:net';
import { normalizeAddress } from '../../config/trust-proxy';
import { logger } from '../logger';
import type { ConnectionLimits } from './connection-limits';

/**
 * Every connection to the console's port, from its accept to its close, whichever parser reads it
 * (the lean lock-service reader or Node's): the caps of connection-limits.ts, held the way a real
 * server holds them.
 *
 * - At most `maxConnections` open, and `maxPerPeer` from one address. A connection over a cap
 *   makes room by closing the oldest *idle anonymous* connection (of that peer for the per-peer
 *   cap, of anyone for the total), as nginx reuses idle keep-alive connections when it runs out;
 *   with none to close, the new one is refused (closed at once, nothing read). So a flood of
 *   anonymous sockets holds at most the caps, and an API-key holder that connects during it still
 *   gets in: only the flood's own idle sockets give way.
 * - Never closed to make room: a connection on which a principal authenticated (an API key, a
 *   session), and one whose request is being answered.
 * - An anonymous connection idles at most `anonymousIdleMs`, an authenticated one `keepAliveMs`
 *   (the connections' own timers read `idleTimeoutMs`).
 */
export class GuardedConnection {
  authenticated = false;
  /** Requests being answered on it now (Node's parser may hold several pipelined ones). */
  private busy = 0;
  released = false;

  constructor(
    readonly socket: Socket,
    readonly peer: string,
    private readonly guard: ConnectionGuard,
  ) {}

  /** A principal authenticated on this connection: the long keep-alive, never closed to make room. */
  markAuthenticated(): void {
    if (this.authenticated) return;
    this.authenticated = true;
    this.guard.unlist(this);
  }

  /** A request on it is being answered (not idle: never closed to make room). */
  begin(): void {
    this.busy++;
    this.guard.unlist(this);
  }

  end(): void {
    this.busy = Math.max(0, this.busy - 1);
    if (this.busy === 0 && !this.authenticated) this.guard.list(this);
  }

  get idle(): boolean {
    return this.busy === 0;
  }

  /** How long it may sit idle between requests. */
  get idleTimeoutMs(): number {
    return this.authenticated ? this.guard.limits.keepAliveMs : this.guard.limits.anonymousIdleMs;
  }
}

export interface GuardStats {
  open: number;
  /** Addresses with a connection open. */
  peers: number;
  /** The most connections open at once, in all and from one address (exempt proxies aside). */
  maxOpen: number;
  maxPeerOpen: number;
  /** Connections refused at accept (a cap reached, nothing to make room), and closed to make room. */
  refused: number;
  evicted: number;
}

/** The guard's record of each socket it admitted (gone with the socket). */
const guarded = new WeakMap<Socket, GuardedConnection>();
/** How often, at most, a cap being reached is logged. */
const LOG_EVERY_MS = 10_000;

interface Peer {
  open: number;
  exempt: boolean;
  /** Its idle anonymous connections, the longest idle first. */
  idle: Set<GuardedConnection>;
}

export class ConnectionGuard {
  private open = 0;
  private readonly peers = new Map<string, Peer>();
  /** Every idle anonymous connection, the longest idle first. */
  private readonly idle = new Set<GuardedConnection>();
  private readonly counters = { maxOpen: 0, maxPeerOpen: 0, refused: 0, evicted: 0 };
  private lastLog = 0;
  private refusedSinceLog = 0;

  constructor(readonly limits: ConnectionLimits) {}

  /** Admit an accepted socket, or refuse it (the socket is destroyed; null). */
  admit(socket: Socket): GuardedConnection | null {
    if (!socket.remoteAddress) {
      socket.destroy(); // closed before we saw it
      return null;
    }
    const address = normalizeAddress(socket.remoteAddress);
    let peer = this.peers.get(address);
    if (!peer) {
      peer = { open: 0, exempt: this.limits.exempt(address), idle: new Set() };
      this.peers.set(address, peer);
    }
    if (!peer.exempt && peer.open >= this.limits.maxPerPeer && !this.evictFrom(peer.idle)) return this.refuse(socket, address, peer);
    if (this.open >= this.limits.maxConnections && !this.evictFrom(this.idle)) return this.refuse(socket, address, peer);
    const connection = new GuardedConnection(socket, address, this);
    guarded.set(socket, connection);
    this.open++;
    peer.open++;
    this.counters.maxOpen = Math.max(this.counters.maxOpen, this.open);
    if (!peer.exempt) this.counters.maxPeerOpen = Math.max(this.counters.maxPeerOpen, peer.open);
    this.list(connection);
    socket.once('close', () => this.release(connection));
    return connection;
  }

  stats(): GuardStats {
    return { open: this.open, peers: this.peers.size, ...this.counters };
  }

  /** Idle and anonymous: a candidate to close when a cap is reached. */
  list(connection: GuardedConnection): void {
    if (connection.released) return;
    const peer = this.peers.get(connection.peer);
    this.idle.delete(connection);
    this.idle.add(connection);
    peer?.idle.delete(connection);
    peer?.idle.add(connection);
  }

  unlist(connection: GuardedConnection): void {
    this.idle.delete(connection);
    this.peers.get(connection.peer)?.idle.delete(connection);
  }

  private release(connection: GuardedConnection): void {
    if (connection.released) return;
    connection.released = true;
    this.unlist(connection);
    this.open--;
    const peer = this.peers.get(connection.peer);
    if (peer && --peer.open === 0) this.peers.delete(connection.peer);
  }

  /** Close the longest idle of `candidates` (counted gone at once, before its 'close'); false when there is none. */
  private evictFrom(candidates: Set<GuardedConnection>): boolean {
    const oldest = candidates.values().next();
    if (oldest.done) return false;
    this.counters.evicted++;
    this.release(oldest.value);
    oldest.value.socket.destroy();
    return true;
  }

  private refuse(socket: Socket, address: string, peer: Peer): null {
    socket.destroy();
    this.counters.refused++;
    this.refusedSinceLog++;
    if (peer.open === 0) this.peers.delete(address);
    const now = Date.now();
    if (now - this.lastLog >= LOG_EVERY_MS) {
      logger().warn(
        { refused: this.refusedSinceLog, open: this.open, peer: address, peerOpen: peer.open, limits: this.describeLimits() },
        'connections refused: a connection cap is reached and every connection under it is busy or authenticated',
      );
      this.lastLog = now;
      this.refusedSinceLog = 0;
    }
    return null;
  }

  private describeLimits(): string {
    return `${this.limits.maxConnections} in all, ${this.limits.maxPerPeer} per address`;
  }
}

/** The guard's record of a socket it admitted (undefined for one it did not see). */
export function guardedConnection(socket: Socket | null | undefined): GuardedConnection | undefined {
  return socket ? guarded.get(socket) : undefined;
}
