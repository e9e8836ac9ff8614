/**
 * How a Next.js route handler tells the console's server that a principal authenticated on the
 * connection its request came on (the connection then keeps the long keep-alive and is never
 * evicted: connection-guard.ts). A handler sees a Web Request, not the socket; the server stamps
 * each request it hands to Next.js with a claim (peer.ts's stamp, which carries the per-process
 * secret) naming the connection, here for as long as the request is answered.
 */
export interface Claimable {
  markAuthenticated(): void;
}

const claims = { next: 0, claims: new Map<string, Claimable>() };

function registry(): { next: number; claims: Map<string, Claimable> } {
  return claims;
}

/** A claim on `connection` for one request; `release` it once the request is answered. */
export function claimConnection(connection: Claimable): { id: string; release(): void } {
  const r = registry();
  const id = (++r.next).toString(36);
  r.claims.set(id, connection);
  return { id, release: () => void r.claims.delete(id) };
}

/** A principal authenticated on the request holding claim `id`. */
export function authenticatedOnClaim(id: string): void {
  registry().claims.get(id)?.markAuthenticated();
}
