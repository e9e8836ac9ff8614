/**
 * Runs once when the console's server process starts (Next.js instrumentation hook), before it
 * serves requests: stamps every incoming request with its TCP peer (lib/server/http/peer.ts), the
 * one address a client cannot choose, which login limits and the audit log need.
 */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME === 'nodejs') {
    const { installPeerStamp } = await import('./lib/server/http/peer');
    installPeerStamp();
  }
}
