import { randomBytes } from 'node:crypto';
import { subscribe } from 'node:diagnostics_channel';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { authenticatedOnClaim, claimConnection, type Claimable } from './connection-claims';

/**
 * The TCP peer of a request, which a route handler cannot see: Next.js hands it a Request without
 * the socket, and fills X-Forwarded-For with the peer's address only when the client sent none (a
 * client that sends one is believed). So the console's server process stamps every incoming
 * request itself, through Node's `http.server.request.start` diagnostics channel, before Next.js
 * sees it: a private header carrying a per-process secret, the peer's address, and the
 * X-Forwarded-For the client actually sent. A client cannot forge the stamp (it does not know the
 * secret, and the stamp is overwritten anyway); a request without a valid stamp has no known peer.
 *
 * installPeerStamp() runs from instrumentation.ts, once, when the server starts; the console's own
 * server (scripts/console-server.ts) stamps what it hands to Next.js itself (stampPeersInServer).
 */
export const PEER_HEADER = 'x-redlock-peer';

const stamping = { secret: randomBytes(18).toString('base64url'), installed: false };

function state(): { secret: string; installed: boolean } {
  return stamping;
}

/**
 * The stamp of a request from `address` that sent `forwardedFor` (null: no X-Forwarded-For);
 * `claim` names its connection for noteAuthenticated (connection-claims.ts).
 */
export function peerStamp(address: string | null | undefined, forwardedFor: string | null, claim?: string): string {
  const parts = [state().secret, encodeURIComponent(address ?? ''), forwardedFor === null ? '-' : `=${encodeURIComponent(forwardedFor)}`];
  if (claim) parts.push(claim);
  return parts.join(' ');
}

export function installPeerStamp(): void {
  const s = state();
  if (s.installed) return;
  s.installed = true;
  subscribe('http.server.request.start', (message) => {
    const { request, socket } = message as { request: IncomingMessage; socket: Socket };
    stampPeer(request, socket);
  });
}

/**
 * For a server that stamps the requests it hands to Next.js itself (scripts/console-server.ts):
 * no diagnostics-channel subscription (installPeerStamp becomes a no-op), so the requests it
 * answers without Next.js (the lock service's fast path) cost nothing here. With `connection`,
 * the stamp carries a claim on it until the response is done: a route that authenticates a
 * principal marks the connection authenticated (noteAuthenticated).
 */
export function stampPeersInServer(): (request: IncomingMessage, response?: ServerResponse, connection?: Claimable) => void {
  state().installed = true;
  return (request, response, connection) => {
    if (!response || !connection) return stampPeer(request, request.socket);
    const claim = claimConnection(connection);
    response.once('close', claim.release);
    stampPeer(request, request.socket, claim.id);
  };
}

function stampPeer(request: IncomingMessage, socket: Socket | undefined, claim?: string): void {
  const xff = request.headers['x-forwarded-for'];
  request.headers[PEER_HEADER] = peerStamp(
    socket?.remoteAddress,
    xff === undefined ? null : Array.isArray(xff) ? xff.join(', ') : xff,
    claim,
  );
}

/**
 * A principal authenticated on `req` (the route wrapper calls this): its connection keeps the long
 * keep-alive and is never closed to make room (connection-guard.ts). Nothing for a request
 * without this process's stamp or without a claim.
 */
export function noteAuthenticated(req: Request): void {
  const stamp = req.headers.get(PEER_HEADER);
  if (!stamp) return;
  const [secret, , , claim] = stamp.split(' ');
  if (secret === state().secret && claim) authenticatedOnClaim(claim);
}

export interface Peer {
  /** The TCP peer's address. */
  address: string | null;
  /** X-Forwarded-For as the client sent it (before Next.js filled it in), null when it sent none. */
  forwardedFor: string | null;
}

/** The peer of a stamped request; null when the stamp is missing or not this process's. */
export function readPeer(req: Request): Peer | null {
  const stamp = req.headers.get(PEER_HEADER);
  if (!stamp) return null;
  const [secret, address, forwarded] = stamp.split(' ');
  if (secret !== state().secret || address === undefined || forwarded === undefined) return null;
  try {
    return {
      address: address ? decodeURIComponent(address) : null,
      forwardedFor: forwarded.startsWith('=') ? decodeURIComponent(forwarded.slice(1)) : null,
    };
  } catch {
    return null;
  }
}
