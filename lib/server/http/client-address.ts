import 'server-only';
import type { IncomingMessage } from 'node:http';
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

/**
 * The same for a request answered on Node's objects before Next.js (lib/server/before-next.ts):
 * its TCP peer is its socket's, and X-Forwarded-For is what the client sent (nobody filled it in).
 */
export function nodeRequestAddress(req: IncomingMessage): string {
  const xff = req.headers['x-forwarded-for'];
  return clientAddress(
    trustProxy(),
    req.socket?.remoteAddress ?? null,
    xff === undefined ? null : Array.isArray(xff) ? xff.join(', ') : xff,
  );
}
