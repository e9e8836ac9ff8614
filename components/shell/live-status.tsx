'use client';

import { useConnectionHealth } from '@/lib/client/connection-health';
import { useLiveEvents } from '@/lib/client/live-events';
import { formatClock } from '../locks/format';
import { useMastersReading } from './use-masters-reading';

/**
 * Opens the live event stream for every signed-in screen and shows whether what the screens show is
 * live. Green only while events stream in AND the last reading of the masters is fresh with every
 * master answering (lib/client/masters-reading.ts): an open socket to a console that cannot read
 * its masters is not "live". Amber while some masters do not answer or the stream reconnects; grey
 * when no master answered or the reading is stale; red when the console's own reads get no answer
 * (then the banner under the bar says since when, and offers a retry).
 */
export function LiveStatus() {
  const { connected } = useLiveEvents();
  const health = useConnectionHealth();
  const masters = useMastersReading();
  const last = masters.receivedAt ? `; last reading at ${formatClock(masters.receivedAt)}` : '';
  let state: 'offline' | 'stale' | 'unread' | 'partial' | 'live' | 'reconnecting';
  let label: string;
  let title: string;
  if (health.failing) {
    state = 'offline';
    label = 'offline';
    title = `The console is not answering${health.lastOkAt ? `: last good read at ${formatClock(health.lastOkAt)}` : ''}`;
  } else if (masters.state === 'stale') {
    state = 'stale';
    label = 'stale';
    title = `Not live: ${masters.reason}${last}`;
  } else if (masters.state === 'unread') {
    state = 'unread';
    label = 'no masters';
    title = `Not live: ${masters.reason}${last}`;
  } else if (masters.state === 'partial') {
    state = 'partial';
    label = `${masters.answered}/${masters.total} read`;
    title = `Partly live: ${masters.reason}`;
  } else if (connected) {
    state = 'live';
    label = 'live';
    title = 'Live: changes stream in as they happen';
  } else {
    state = 'reconnecting';
    label = 'reconnecting';
    title = 'Reconnecting to the live event stream…';
  }
  return (
    <span className={`live-dot live-${state}`} data-testid="live-status" data-state={state} title={title}>
      <span aria-hidden="true" className="dot" /> <span className="live-label">{label}</span>
    </span>
  );
}
