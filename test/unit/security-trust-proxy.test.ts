import { describe, expect, it } from 'vitest';
import { clientAddress, ConfigError, loadConfig, parseTrustProxy } from '../../lib/config';

describe('REDLOCK_TRUST_PROXY', () => {
  it('is off by default: the TCP peer, whatever X-Forwarded-For says', () => {
    for (const raw of [undefined, '', 'off', 'false', '0']) {
      expect(clientAddress(parseTrustProxy(raw), '::ffff:127.0.0.1', '6.6.6.6, 7.7.7.7')).toBe('127.0.0.1');
    }
    expect(loadConfig({}).trustProxy).toEqual({ kind: 'off' });
  });

  it('a hop count takes the address the outermost trusted proxy saw', () => {
    const two = parseTrustProxy('2');
    expect(clientAddress(two, '10.0.0.2', 'forged, 198.51.100.7, 10.0.0.9')).toBe('198.51.100.7');
    expect(clientAddress(two, '10.0.0.2', '198.51.100.7')).toBe('198.51.100.7'); // fewer hops than configured: the leftmost
    expect(clientAddress(parseTrustProxy('1'), '10.0.0.2', '[2001:db8::1]:443')).toBe('2001:db8::1');
  });

  it('a CIDR list walks left while the address is a trusted proxy', () => {
    const cidrs = parseTrustProxy('10.0.0.0/8, 192.168.1.7, ::1');
    expect(clientAddress(cidrs, '::1', 'forged, 203.0.113.5, 10.1.2.3')).toBe('203.0.113.5');
    expect(clientAddress(cidrs, '203.0.113.9', '1.2.3.4')).toBe('203.0.113.9'); // the peer is no trusted proxy
    expect(clientAddress(cidrs, '192.168.1.7', '10.0.0.1, 10.0.0.2')).toBe('10.0.0.1'); // all trusted: the leftmost
    expect(clientAddress(cidrs, '10.0.0.1', 'not-an-ip, 10.0.0.3')).toBe('not-an-ip');
  });

  it.each(['abc', '10.0.0.0/33', '1.2.3.4/8/1', '99'])('%s is a clear ConfigError', (raw) => {
    expect(() => parseTrustProxy(raw)).toThrow(ConfigError);
    expect(() => loadConfig({ REDLOCK_TRUST_PROXY: raw })).toThrow(/REDLOCK_TRUST_PROXY/);
  });
});
