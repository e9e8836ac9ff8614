import { describe, expect, it } from 'vitest';
import { trustForOwnService } from '../../lib/config/lock-service';
import { clientAddress, parseTrustProxy } from '../../lib/config/trust-proxy';
import { connectionLimits } from '../../lib/server/http/connection-limits';

/**
 * `npm start` runs a lock service beside its console, which forwards every lock request to it from
 * loopback: the service must count the console as a proxy (against the total only), or its
 * per-peer cap of 256 connections is one cap for every client of the console.
 */
const limitsFor = (consoleTrust: string | undefined, host = '127.0.0.1') =>
  connectionLimits({ REDLOCK_TRUST_PROXY: trustForOwnService(consoleTrust, host) });

describe("the trust the lock service npm start runs gives its console's address", () => {
  it('exempts the console (loopback) from the per-peer cap, whatever the console itself trusts', () => {
    for (const consoleTrust of [undefined, 'off', '2', '10.0.0.0/8'])
      for (const address of ['127.0.0.1', '::1']) expect(limitsFor(consoleTrust).exempt(address), `${consoleTrust} ${address}`).toBe(true);
    // Other peers are still capped one by one.
    expect(limitsFor(undefined).exempt('192.168.1.9')).toBe(false);
    // The console's own proxies stay trusted; a service host given as an address is added.
    expect(limitsFor('10.0.0.0/8').exempt('10.1.2.3')).toBe(true);
    expect(limitsFor(undefined, '192.168.1.5').exempt('192.168.1.5')).toBe(true);
  });

  it('believes the client the console appended to X-Forwarded-For, not what the client claimed before it', () => {
    const trust = parseTrustProxy(trustForOwnService(undefined, '127.0.0.1'));
    // The client sent a forged header to the console; the console appended the address it saw.
    expect(clientAddress(trust, '127.0.0.1', '6.6.6.6, 203.0.113.7')).toBe('203.0.113.7');
  });
});
