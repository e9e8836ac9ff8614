import type { RunView } from '@/lib/api/scenarios';
import { fmtSeconds, OUTCOME_LABEL, VOTE_REASON } from './format';
import { BeliefBar } from './timeline-beliefs';
import { pausesOf, type Lane } from './timeline-layout';
import type { TimelineScale } from './timeline-scale';
import styles from './timeline.module.css';

type Attempt = RunView['timeline']['attempts'][number];

/** The overlaps the checker found, drawn as a band across every client lane. */
export function OverlapBands({ run, scale, top, bottom }: { run: RunView; scale: TimelineScale; top: number; bottom: number }) {
  const { x, w } = scale;
  return (
    <>
      {run.checker.resources
        .flatMap((r) => r.overlaps)
        .map((o) => (
          <rect
            key={`ov-${o.resource}-${o.from}`}
            x={x(o.from)}
            y={top}
            width={w(o.from, o.to)}
            height={bottom - top}
            className={styles.overlapBand}
          />
        ))}
    </>
  );
}

/** One client's lane: its pauses, what it believed it held, its acquire calls and its writes. */
export function ClientLane({
  run,
  client,
  now,
  scale,
  uid,
  shortFence,
}: {
  run: RunView;
  client: string;
  now: number;
  scale: TimelineScale;
  uid: string;
  shortFence: (fence: number | null) => string;
}) {
  const { x, w } = scale;
  const l = scale.lane('client', client)!;
  const multi = run.resources.length > 1;
  return (
    <g>
      {pausesOf(run, client, now).map((p) => (
        <g key={`p-${p.from}`} data-testid="client-pause" data-client={client}>
          <rect x={x(p.from)} y={l.y + 30} width={w(p.from, p.to)} height={6} rx={2} className={styles.pause}>
            <title>{`${client} is paused (simulated: the engine runs none of its steps) from ${fmtSeconds(p.from)}`}</title>
          </rect>
        </g>
      ))}
      {run.timeline.beliefs
        .filter((b) => b.client === client)
        .map((b) => (
          <BeliefBar
            key={`b-${b.resource}-${b.from}`}
            belief={b}
            lane={l}
            now={now}
            scale={scale}
            uid={uid}
            multi={multi}
            shortFence={shortFence}
          />
        ))}
      {run.timeline.attempts
        .filter((a) => a.client === client)
        .map((a) => (
          <AttemptLine key={`a-${a.id}`} attempt={a} lane={l} now={now} scale={scale} />
        ))}
      {run.timeline.writes
        .filter((wr) => wr.client === client)
        .map((wr, i) => (
          <g key={`w-${i}`} data-testid="write-dot" data-fenced={wr.fenced}>
            <path
              d={`M ${x(wr.t)} ${l.y + 1} l 5 5 l -5 5 l -5 -5 Z`}
              className={wr.fenced === 'accepted' ? styles.writeOk : styles.writeBad}
            />
            <title>{`${client} writes "${wr.value}" (fence ${wr.fence ?? 'none'}): plain store accepted, fenced store ${wr.fenced}`}</title>
          </g>
        ))}
    </g>
  );
}

/** An acquire call from its start to its answer: a dot coloured by the outcome, each node's vote in its title. */
function AttemptLine({ attempt: a, lane: l, now, scale }: { attempt: Attempt; lane: Lane; now: number; scale: TimelineScale }) {
  const { x } = scale;
  const to = a.to ?? now;
  const ok = a.outcome === 'granted';
  const y = l.y + l.h - 4;
  const votes = a.votes
    .map(
      (v) =>
        `node ${v.node}: ${v.vote} (${VOTE_REASON[v.reason] ?? v.reason}${v.reason === 'quarantined' && v.detail ? `: ${v.detail}` : ''})`,
    )
    .join('\n');
  return (
    <g data-testid={`attempt-${a.id}`} data-outcome={a.outcome ?? 'pending'}>
      <line x1={x(a.from)} x2={x(to)} y1={y} y2={y} className={styles.attemptLine} />
      {a.outcome && (
        <circle
          cx={x(to)}
          cy={y}
          r={3.2}
          className={ok ? styles.attemptOk : a.outcome === 'LockContendedError' ? styles.attemptWarn : styles.attemptBad}
        >
          <title>{`${a.client} ${a.id}: ${OUTCOME_LABEL[a.outcome] ?? a.outcome} after ${a.tries} attempt${a.tries === 1 ? '' : 's'}\n${votes}`}</title>
        </circle>
      )}
    </g>
  );
}
