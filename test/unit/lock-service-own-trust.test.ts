import { describe, expect, it } from 'vitest';
import { trustForOwnService } from '../../lib/config/lock-service';
import { clientAddress, parseTrustProxy } from '../../lib/config/trust-proxy';
import { connectionLimits } from '../../lib/server/http/connection-limits';

/**
 * `npm start` runs a lock service beside its console, which forwards every lock request to it from
 * loopback: the service must count the console as a proxy (against the total only), or its
 * per-peer cap of 256 connections is one cap for every client of the console.
 */
const limitsFor = (host = '127.0.0.1') => connectionLimits({ REDLOCK_TRUST_PROXY: trustForOwnService(host) });

describe("the trust the lock service npm start runs gives its console's address", () => {
  it('exempts the console (loopback, or the host both are on) from the per-peer cap, and no one else', () => {
    for (const address of ['127.0.0.1', '::1']) expect(limitsFor().exempt(address), address).toBe(true);
    expect(limitsFor('192.168.1.5').exempt('192.168.1.5')).toBe(true);
    // Other peers are still capped one by one, the console's own proxies included: they do not
    // reach the service through the console (a host of theirs that connected directly would escape the cap).
    expect(limitsFor().exempt('192.168.1.9')).toBe(false);
    expect(limitsFor().exempt('10.1.2.3')).toBe(false);
  });

  it('believes the client the console appended to X-Forwarded-For, not what the client claimed before it', () => {
    const trust = parseTrustProxy(trustForOwnService('127.0.0.1'));
    // The client sent a forged header to the console; the console appended the address it saw.
    expect(clientAddress(trust, '127.0.0.1', '6.6.6.6, 203.0.113.7')).toBe('203.0.113.7');
  });
});
