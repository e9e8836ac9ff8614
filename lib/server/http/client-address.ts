import 'server-only';
import { clientAddress, parseTrustProxy, type TrustProxy } from '../../config/trust-proxy';
import { readPeer } from './peer';

let cached: { raw: string | undefined; trust: TrustProxy } | null = null;

/** REDLOCK_TRUST_PROXY as this process was started with it (validated by `npm start`). */
export function trustProxy(): TrustProxy {
  const raw = process.env.REDLOCK_TRUST_PROXY;
  if (!cached || cached.raw !== raw) cached = { raw, trust: parseTrustProxy(raw) };
  return cached.trust;
}

/**
 * The address a request comes from, for login limits and the audit log: the TCP peer, unless
 * REDLOCK_TRUST_PROXY says which forwarded addresses to believe (lib/config/trust-proxy.ts).
 * `unknown` when the peer is not known (a request that did not come through the server's socket).
 */
export function requestAddress(req: Request): string {
  const peer = readPeer(req);
  return clientAddress(trustProxy(), peer?.address ?? null, peer ? peer.forwardedFor : req.headers.get('x-forwarded-for'));
}
