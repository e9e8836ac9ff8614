import { BlockList, isIP } from 'node:net';
import { ConfigError } from './errors';

/**
 * REDLOCK_TRUST_PROXY: may X-Forwarded-For name the client?
 * - unset, `off`, `false`, `0`: no. The client is the address of the TCP peer; a forwarded header
 *   is the client's own claim and changes nothing (rotating it gains an attacker nothing).
 * - a whole number N ≥ 1: N reverse proxies stand in front of the console; the client is the
 *   address the outermost of them saw (the N-th entry of X-Forwarded-For counted from the right,
 *   the TCP peer being the innermost proxy).
 * - a comma-separated list of addresses and CIDR ranges (`10.0.0.0/8, 192.168.1.7, ::1`): walk from
 *   the TCP peer leftwards through X-Forwarded-For while the address is one of these; the first one
 *   that is not is the client.
 */
export type TrustProxy = { kind: 'off' } | { kind: 'hops'; hops: number } | { kind: 'cidrs'; list: BlockList; text: string };

export function parseTrustProxy(raw: string | undefined): TrustProxy {
  const value = raw?.trim() ?? '';
  if (value === '' || /^(off|false|no|0)$/i.test(value)) return { kind: 'off' };
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops > 16) throw new ConfigError(`REDLOCK_TRUST_PROXY must be off, a hop count (1–16) or a list of CIDR ranges, got ${value}`);
    return { kind: 'hops', hops };
  }
  const list = new BlockList();
  for (const item of value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [address, bits, extra] = item.split('/');
    const family = isIP(address ?? '');
    const max = family === 4 ? 32 : 128;
    const prefix = bits === undefined ? max : /^\d+$/.test(bits) ? Number(bits) : NaN;
    if (!family || extra !== undefined || !(prefix >= 0 && prefix <= max)) {
      throw new ConfigError(
        `REDLOCK_TRUST_PROXY: "${item}" is not an IP address or CIDR range (use off, a hop count, or e.g. 10.0.0.0/8,::1)`,
      );
    }
    list.addSubnet(address!, prefix, family === 4 ? 'ipv4' : 'ipv6');
  }
  return { kind: 'cidrs', list, text: value };
}

/** `::ffff:1.2.3.4` → `1.2.3.4`; `[::1]:80` / `1.2.3.4:80` → the address; anything else as given, trimmed. */
export function normalizeAddress(raw: string): string {
  let a = raw.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(a);
  if (bracketed) a = bracketed[1]!;
  else if (/^\d{1,3}(\.\d{1,3}){3}:\d+$/.test(a)) a = a.slice(0, a.lastIndexOf(':'));
  const mapped = /^::ffff:(\d{1,3}(\.\d{1,3}){3})$/i.exec(a);
  return mapped ? mapped[1]! : a.toLowerCase();
}

/**
 * The client's address under `trust`: `peer` is the TCP peer's address (null when unknown),
 * `forwardedFor` the X-Forwarded-For header as it arrived (null when absent).
 */
export function clientAddress(trust: TrustProxy, peer: string | null, forwardedFor: string | null): string {
  const socket = peer === null ? 'unknown' : normalizeAddress(peer);
  if (trust.kind === 'off' || !forwardedFor) return socket;
  // Nearest first: the peer, then X-Forwarded-For from its right end (appended by the nearest proxy).
  const chain = [socket, ...forwardedFor.split(',').map(normalizeAddress).filter(Boolean).reverse()];
  if (trust.kind === 'hops') return chain[Math.min(trust.hops, chain.length - 1)]!;
  for (let i = 0; i < chain.length - 1; i++) {
    const a = chain[i]!;
    const family = isIP(a);
    if (!family || !trust.list.check(a, family === 4 ? 'ipv4' : 'ipv6')) return a;
  }
  return chain[chain.length - 1]!;
}
