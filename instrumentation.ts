/**
 * Runs once when the console's server process starts (Next.js instrumentation hook), before it
 * serves requests: stamps every incoming request with its TCP peer (lib/server/http/peer.ts), the
 * one address a client cannot choose, which login limits and the audit log need; and starts the
 * history sampler (lib/server/history-sampler.ts), which keeps the charts filled while no screen
 * is open, and the count of grants seen on the masters (lib/server/grants-seen.ts).
 */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME === 'nodejs') {
    const { installPeerStamp } = await import('./lib/server/http/peer');
    installPeerStamp();
    const { startHistorySampler } = await import('./lib/server/history-sampler');
    startHistorySampler();
    const { startGrantCounter } = await import('./lib/server/grants-seen');
    startGrantCounter();
  }
}
