'use client';

import { useConnectionHealth } from '@/lib/client/connection-health';
import { useLiveEvents } from '@/lib/client/live-events';
import { formatClock } from '../locks/format';

/**
 * Opens the live event stream for every signed-in screen and shows whether the console is live:
 * green while events stream in, amber while the stream reconnects, red when the console's reads
 * get no answer (then the banner under the bar says since when, and offers a retry).
 */
export function LiveStatus() {
  const { connected } = useLiveEvents();
  const health = useConnectionHealth();
  const state = health.failing ? 'offline' : connected ? 'live' : 'reconnecting';
  const title =
    state === 'offline'
      ? `The console is not answering${health.lastOkAt ? `: last good read at ${formatClock(health.lastOkAt)}` : ''}`
      : state === 'live'
        ? 'Live: changes stream in as they happen'
        : 'Reconnecting to the live event stream…';
  return (
    <span className={`live-dot live-${state}`} data-testid="live-status" data-state={state} title={title}>
      <span aria-hidden="true" className="dot" /> <span className="live-label">{state}</span>
    </span>
  );
}
