'use client';

import type { NodesResponse } from '@/lib/api/nodes';
import { headlineUnknown, type MastersReading } from '@/lib/client/masters-reading';
import { formatClock } from '../locks/format';
import { clusterTone, nodeState, voteState } from '../nodes/node-state';
import { grantableAt, quarantineEndsAt } from '../nodes/quarantine-clock';
import { Countdown, ReadAge } from '../ui/clock';
import styles from './overview.module.css';
import { toneColor } from '../ui/palette';

/** "Can locks be granted right now?" — the answer, in words and colour, and why. */
export function ClusterBanner({ data, skew, reading }: { data: NodesResponse; skew: number; reading: MastersReading }) {
  const { verdict, nodes } = data;
  if (headlineUnknown(reading, data.nodes)) return <UnknownBanner data={data} skew={skew} reading={reading} />;
  // Reachable as the cards say it (the supervisor's "process down" counts at once), so the two never disagree.
  const reachable = nodes.filter((n) => {
    const k = nodeState(n).key;
    return k === 'up' || k === 'slow';
  }).length;
  const spare = verdict.usable - verdict.quorum;
  const waiting = !verdict.canGrant && verdict.grantableInMs !== null && verdict.grantableInMs > 0;
  // Green only when every node votes: a node out is a warning even while the others carry the quorum.
  const tone = clusterTone(verdict);
  const readAt = data.readAt + skew;
  // The first reason repeats the headline; the rest say why each unusable node does not count.
  const reasons = verdict.reasons.slice(1);

  let note: React.ReactNode;
  if (verdict.canGrant) {
    note =
      spare >= 1
        ? `${spare} more node${spare === 1 ? '' : 's'} can fail before new locks stop.`
        : 'No margin left: one more node failure stops every new lock.';
  } else if (waiting) {
    note = (
      <>
        Only quarantines stand in the way: grantable in{' '}
        <strong>
          <Countdown until={grantableAt(data, skew) ?? readAt + verdict.grantableInMs!} done="a moment" testId="grantable-in" />
        </strong>
        .
      </>
    );
  } else {
    const missing = verdict.quorum - verdict.usable;
    note = `${missing} more usable node${missing === 1 ? ' is' : 's are'} needed for a majority; acquires fail until then.`;
  }

  return (
    <section
      className={`${styles.banner} ${styles[tone]}`}
      data-testid="cluster-banner"
      data-state={verdict.canGrant ? 'grantable' : waiting ? 'waiting' : 'blocked'}
      aria-label="Can locks be granted"
      aria-live="polite"
    >
      <span className={styles.bannerIcon} aria-hidden="true">
        {tone === 'ok' ? '✓' : tone === 'warn' ? '!' : '✕'}
      </span>
      <div className={styles.bannerBody}>
        <h2 className={styles.bannerHeadline}>
          {verdict.canGrant ? 'Locks can be granted' : waiting ? 'Locks cannot be granted yet' : 'Locks cannot be granted'}
        </h2>
        <p className={styles.bannerFacts}>
          {reachable} of {verdict.configuredNodes} masters reachable · {verdict.usable} usable · quorum {verdict.quorum}
        </p>
        <p className={styles.bannerNote}>{note}</p>
        {reasons.length > 0 ? (
          <ul className={styles.reasons} aria-label="Why">
            {reasons.map((r) => (
              <li key={r}>
                <Reason text={r} data={data} skew={skew} />
              </li>
            ))}
          </ul>
        ) : null}
      </div>
      <div className={styles.bannerSide}>
        <QuorumGauge data={data} />
        <ReadAge at={readAt} className="small muted" testId="banner-read-age" />
      </div>
    </section>
  );
}

/** Grey, in words: whether locks can be granted is not known, why, and what the last reading said. */
function UnknownBanner({ data, skew, reading }: { data: NodesResponse; skew: number; reading: MastersReading }) {
  const readAt = data.readAt + skew;
  const why =
    reading.state === 'offline'
      ? 'The console is not answering'
      : reading.state === 'stale'
        ? `The masters have not been read since ${formatClock(readAt)}`
        : `No master answered the console's last reading: ${reading.reason}`;
  const before = data.verdict.canGrant ? 'could be granted' : 'could not be granted';
  return (
    <section
      className={`${styles.banner} ${styles.unknown}`}
      data-testid="cluster-banner"
      data-state="unknown"
      data-reading={reading.state}
      aria-label="Can locks be granted"
      aria-live="polite"
    >
      <span className={styles.bannerIcon} aria-hidden="true">
        ?
      </span>
      <div className={styles.bannerBody}>
        <h2 className={styles.bannerHeadline}>Unknown: cannot tell whether locks can be granted</h2>
        <p className={styles.bannerFacts} data-testid="cluster-banner-why">
          {why}.
        </p>
        <p className={styles.bannerNote}>
          {reading.state === 'unread'
            ? 'Clients that reach the masters another way may still be taking locks; the console sees none of it.'
            : `At the last reading (${formatClock(readAt)}) locks ${before}: that may no longer be true.`}
        </p>
      </div>
      <div className={styles.bannerSide}>
        <ReadAge at={readAt} className="small muted" testId="banner-read-age" />
      </div>
    </section>
  );
}

/**
 * A reason as the server wrote it, except that "node N is quarantined for another 4.9 s" counts down
 * live from the node's own reading, so it agrees with the card and the countdown above.
 */
function Reason({ text, data, skew }: { text: string; data: NodesResponse; skew: number }) {
  const match = /^node (\d+) is quarantined for another [\d.]+ s$/.exec(text);
  const node = match ? data.nodes.find((n) => n.id === Number(match[1])) : undefined;
  const endsAt = node ? quarantineEndsAt(node, skew) : null;
  if (!node || endsAt === null) return <>{text}</>;
  return (
    <>
      node {node.id} is quarantined for another <Countdown until={endsAt} done="a moment" />
    </>
  );
}

/** One slot per configured node, usable ones first, with the quorum line drawn across. */
function QuorumGauge({ data }: { data: NodesResponse }) {
  const rank = { ok: 0, warn: 1, bad: 2 } as const;
  const slots = data.nodes
    .map((n) => {
      const v = voteState(n);
      const tone: 'ok' | 'warn' | 'bad' = n.usable ? 'ok' : v.tone === 'warn' && n.up ? 'warn' : 'bad';
      return { id: n.id, tone, title: `node ${n.id}: ${n.usable ? 'votes' : v.label}` };
    })
    .sort((a, b) => rank[a.tone] - rank[b.tone] || a.id - b.id);
  const slotWidth = 38 + 4;
  return (
    <div
      className={styles.gauge}
      role="img"
      aria-label={`${data.verdict.usable} of ${data.verdict.configuredNodes} nodes usable; quorum ${data.verdict.quorum}`}
    >
      <div className={styles.gaugeTrack}>
        {slots.map((s) => (
          <span key={s.id} className={`${styles.gaugeSlot} ${styles[s.tone]}`} title={s.title}>
            n{s.id}
          </span>
        ))}
        <span className={styles.gaugeMarker} style={{ left: data.verdict.quorum * slotWidth - 3 }}>
          <span className={styles.gaugeMarkerLabel}>quorum {data.verdict.quorum}</span>
        </span>
      </div>
      <span className={styles.gaugeLegend} aria-hidden="true">
        <span>
          <i style={{ background: toneColor('ok') }} />
          votes
        </span>
        <span>
          <i style={{ background: toneColor('warn') }} />
          quarantined
        </span>
        <span>
          <i style={{ background: toneColor('bad') }} />
          out
        </span>
      </span>
    </div>
  );
}
