import type { LiveEvent } from '@/lib/api/events';
import { formatAgo, formatClock } from './format';
import styles from './lock-detail.module.css';
import { formatDateTime } from '../ui/format';

const EVENT_INFO: Record<string, { label: string; tone: 'ok' | 'warn' | 'bad' | 'info' | 'muted' }> = {
  'lock.granted': { label: 'granted', tone: 'ok' },
  'lock.extended': { label: 'extended', tone: 'info' },
  'lock.released': { label: 'released', tone: 'muted' },
  'lock.expired': { label: 'expired', tone: 'warn' },
  'lock.force-released': { label: 'force-released', tone: 'bad' },
};

const SOURCE: Record<LiveEvent['source'], string> = {
  notifications: 'keyspace notification',
  polling: 'seen by polling',
  service: 'by this console',
};

/** The live events of one lock, newest first (since this page was opened). */
export function LockEvents({ events, now }: { events: LiveEvent[]; now: number }) {
  if (events.length === 0) {
    return (
      <p className={styles.emptyNote} data-testid="lock-events-empty">
        Nothing yet. Grants, extensions, releases and expiries of this lock appear here as the nodes report them, from the moment you opened
        this page.
      </p>
    );
  }
  return (
    <ol className={styles.events} data-testid="lock-events">
      {events.map((event, i) => {
        const info = EVENT_INFO[event.type] ?? { label: event.type, tone: 'muted' as const };
        return (
          <li key={`${event.at}-${event.type}-${i}`} className={styles.event} data-type={event.type}>
            <span className={`${styles.eventDot} ${styles[`dot-${info.tone}`]}`} aria-hidden="true" />
            <span className={styles.eventMain}>
              <strong>{info.label}</strong>
              {event.nodes?.length ? <span className="muted"> on node {event.nodes.join(', ')}</span> : null}
              {event.detail ? <span className="muted"> · {event.detail}</span> : null}
              <span className={styles.eventSource}>{SOURCE[event.source]}</span>
            </span>
            <time className={styles.eventTime} dateTime={new Date(event.at).toISOString()} title={formatDateTime(event.at)}>
              {formatClock(event.at)}
              <span className="muted"> · {now ? formatAgo(event.at, now) : ''}</span>
            </time>
          </li>
        );
      })}
    </ol>
  );
}
