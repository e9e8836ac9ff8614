import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../lib/config/errors';
import { ConnectionGuard } from '../../lib/server/http/connection-guard';
import { connectionLimits, defaultMaxConnections } from '../../lib/server/http/connection-limits';
import { noteAuthenticated, PEER_HEADER, stampPeersInServer } from '../../lib/server/http/peer';

/**
 * The connection guard's rules without sockets (test/integration/security-connections.test.ts runs
 * them on real ones, under a flood): which connection makes room, who is never closed for it, the
 * caps' defaults and settings, and how a Next.js route marks its connection authenticated.
 */
class FakeSocket extends EventEmitter {
  destroyed = false;
  constructor(readonly remoteAddress: string) {
    super();
  }
  destroy(): this {
    if (!this.destroyed) {
      this.destroyed = true;
      queueMicrotask(() => this.emit('close'));
    }
    return this;
  }
}
const socket = (address: string) => new FakeSocket(address) as unknown as Socket & FakeSocket;

describe('ConnectionGuard', () => {
  const limits = (over: Partial<Parameters<typeof connectionLimits>[1]> = {}) =>
    connectionLimits({}, { maxConnections: 4, maxPerPeer: 2, ...over });

  it('per address: the oldest idle anonymous connection makes room; busy and authenticated ones never do', () => {
    const guard = new ConnectionGuard(limits());
    const [a, b, c] = [socket('10.0.0.1'), socket('10.0.0.1'), socket('10.0.0.1')];
    guard.admit(a);
    guard.admit(b);
    expect(guard.admit(c)).not.toBeNull();
    expect(a.destroyed).toBe(true); // the oldest idle one
    expect(b.destroyed).toBe(false);
    expect(guard.stats().evicted).toBe(1);
    // From another address, one busy and one authenticated: a third finds no room and is refused.
    const busy = guard.admit(socket('10.0.0.3'))!;
    busy.begin();
    const authenticated = guard.admit(socket('10.0.0.3'))!;
    authenticated.markAuthenticated();
    const refused = socket('10.0.0.3');
    expect(guard.admit(refused)).toBeNull();
    expect(refused.destroyed).toBe(true);
    expect(guard.stats().refused).toBe(1);
    // Once its request is answered, the busy one is idle and anonymous again: it makes room.
    busy.end();
    expect(guard.admit(socket('10.0.0.3'))).not.toBeNull();
    expect(busy.socket.destroyed).toBe(true);
    expect(authenticated.socket.destroyed).toBe(false);
  });

  it('in all: the longest idle anonymous connection of any address makes room', () => {
    const guard = new ConnectionGuard(limits());
    const first = guard.admit(socket('10.0.1.1'))!;
    const second = guard.admit(socket('10.0.1.2'))!;
    second.begin();
    second.end(); // idle again: now younger in idleness than `first`
    guard.admit(socket('10.0.1.3'))!.markAuthenticated();
    guard.admit(socket('10.0.1.4'))!.markAuthenticated();
    expect(guard.admit(socket('10.0.1.5'))).not.toBeNull();
    expect(first.socket.destroyed).toBe(true);
    expect(second.socket.destroyed).toBe(false);
    expect(guard.stats()).toMatchObject({ open: 4, maxOpen: 4, evicted: 1, refused: 0 });
  });

  it('a trusted proxy (REDLOCK_TRUST_PROXY ranges) is not held to the per-address cap, only to the total', () => {
    const guard = new ConnectionGuard(connectionLimits({ REDLOCK_TRUST_PROXY: '10.9.0.0/16' }, { maxConnections: 4, maxPerPeer: 1 }));
    for (let i = 0; i < 4; i++) guard.admit(socket('10.9.0.7'))!.markAuthenticated();
    expect(guard.stats().open).toBe(4);
    expect(guard.admit(socket('10.9.0.7'))).toBeNull();
    expect(guard.admit(socket('::ffff:10.8.0.1'))).toBeNull(); // mapped IPv4, not a proxy: the total is full
  });

  it('an idle timeout short until someone authenticates, the long keep-alive after', () => {
    const guard = new ConnectionGuard(connectionLimits({}, { anonymousIdleMs: 1_000, keepAliveMs: 65_000 }));
    const c = guard.admit(socket('10.0.2.1'))!;
    expect(c.idleTimeoutMs).toBe(1_000);
    c.markAuthenticated();
    expect(c.idleTimeoutMs).toBe(65_000);
  });
});

describe('connection limits', () => {
  it('default to the open-file limit less a fifth (≥ 256 kept back), within 64…32,768; 4,096 when unknown', () => {
    expect(defaultMaxConnections(20_000)).toBe(16_000);
    expect(defaultMaxConnections(1_024)).toBe(768);
    expect(defaultMaxConnections(256)).toBe(64);
    expect(defaultMaxConnections(1_048_576)).toBe(32_768);
    expect(defaultMaxConnections(null)).toBe(4_096);
  });

  it('read REDLOCK_MAX_CONNECTIONS and REDLOCK_MAX_CONNECTIONS_PER_PEER, refusing what is not a count', () => {
    expect(connectionLimits({ REDLOCK_MAX_CONNECTIONS: '5000', REDLOCK_MAX_CONNECTIONS_PER_PEER: '64' })).toMatchObject({
      maxConnections: 5_000,
      maxPerPeer: 64,
      anonymousIdleMs: 10_000,
      keepAliveMs: 65_000,
    });
    for (const bad of ['0', '-1', '1e3', 'many', '12345678'])
      expect(() => connectionLimits({ REDLOCK_MAX_CONNECTIONS_PER_PEER: bad })).toThrow(ConfigError);
  });
});

describe('a Next.js route marks its connection authenticated through the peer stamp', () => {
  it('the claim reaches the connection while its request is answered, and only with this process’s stamp', () => {
    let marked = 0;
    const connection = { markAuthenticated: () => void marked++ };
    const request = { headers: {} as Record<string, string>, socket: { remoteAddress: '10.0.3.1' } } as unknown as IncomingMessage;
    const response = new EventEmitter() as unknown as ServerResponse;
    stampPeersInServer()(request, response, connection);
    const stamp = request.headers[PEER_HEADER] as string;
    const asRoute = (value: string) => new Request('http://console.test/api/nodes', { headers: { [PEER_HEADER]: value } });
    noteAuthenticated(asRoute(stamp));
    expect(marked).toBe(1);
    noteAuthenticated(asRoute(`forged ${stamp.split(' ').slice(1).join(' ')}`));
    expect(marked).toBe(1);
    response.emit('close'); // answered: the claim is gone
    noteAuthenticated(asRoute(stamp));
    expect(marked).toBe(1);
  });
});
