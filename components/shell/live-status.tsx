'use client';

import { useLiveEvents } from '@/lib/client/live-events';

/** Opens the live event stream for every signed-in screen and shows whether it is connected. */
export function LiveStatus() {
  const { connected } = useLiveEvents();
  return (
    <span
      className={`live-dot ${connected ? 'live-on' : 'live-off'}`}
      data-testid="live-status"
      title={connected ? 'Live: changes stream in as they happen' : 'Reconnecting to the live event stream…'}
    >
      <span aria-hidden="true" className="dot" /> {connected ? 'live' : 'reconnecting'}
    </span>
  );
}
