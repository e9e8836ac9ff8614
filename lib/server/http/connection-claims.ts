/**
 * How a Next.js route handler tells the console's server that a principal authenticated on the
 * connection its request came on (the connection then keeps the long keep-alive and is never
 * evicted: connection-guard.ts). A handler sees a Web Request, not the socket; the server stamps
 * each request it hands to Next.js with a claim (peer.ts's stamp, which carries the per-process
 * secret) naming the connection, here for as long as the request is answered. The registry lives
 * on globalThis: Next.js's bundle of the route handlers and the server's own modules are two
 * copies of this file in one process.
 */
export interface Claimable {
  markAuthenticated(): void;
}

const KEY = Symbol.for('redlock.connection-claims');
type Holder = { [KEY]?: { next: number; claims: Map<string, Claimable> } };

function registry(): { next: number; claims: Map<string, Claimable> } {
  const holder = globalThis as Holder;
  holder[KEY] ??= { next: 0, claims: new Map() };
  return holder[KEY];
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
