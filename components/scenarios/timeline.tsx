'use client';

import { useEffect, useId, useRef, useState } from 'react';
import type { RunView } from '@/lib/api/scenarios';
import { clientColor, clientTint } from './palette';
import { fenceFormatter, fmtSeconds, OUTCOME_LABEL, runFences, VOTE_REASON } from './format';
import { FenceTicks } from './timeline-fences';
import { GUTTER, layoutTimeline, NODE_PAD, pausesOf, RIGHT_PAD, ROW_H, runTime, textWidth, type Lane } from './timeline-layout';
import styles from './timeline.module.css';

const QUARANTINE_CAUSE: Record<string, string> = {
  restart: 'its redis-server restarted, maybe from older data',
  'data-loss': 'its sentinel was gone, so it lost data',
  eviction: 'it evicted keys',
  replaced: 'a replication sync replaced its data',
  rollback: 'its data went back in time within one process (a restore in place)',
  'clock-jump': 'its clock jumped, so keys may have expired early',
};

const STATE_LABEL: Record<string, string> = {
  down: 'down',
  starting: 'starting',
  stopping: 'stopping',
  paused: 'paused',
  partitioned: 'partitioned',
  slow: 'slow',
  reset: 'connections reset',
  unknown: '?',
};

function useWidth(ref: React.RefObject<HTMLDivElement | null>): number {
  const [width, setWidth] = useState(1100);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    // Down to a phone's width: the whole run stays in view (labels that do not fit are left out).
    const observer = new ResizeObserver(([entry]) => setWidth(Math.max(330, Math.floor(entry!.contentRect.width))));
    observer.observe(el);
    return () => observer.disconnect();
  }, [ref]);
  return width;
}

/**
 * The run drawn over time: one lane per node (whose key it holds, with the TTL still to run as a
 * dashed fuse; crashes, partitions, latency), one lane per client (when it believes it holds the
 * lock, its attempts and writes), and the checker (overlaps in red, drawn across the clients).
 */
export function Timeline({ run, now, live, spanMs }: { run: RunView; now: number; live: boolean; spanMs?: number }) {
  const wrap = useRef<HTMLDivElement>(null);
  const width = useWidth(wrap);
  const uid = useId().replace(/:/g, '');
  const layout = layoutTimeline(run, now, live, spanMs);
  const plot = width - GUTTER - RIGHT_PAD;
  // The axis is the run's own time: `xr` places a run time, `x` a wall time (prediction waits folded out).
  const xr = (t: number) => GUTTER + (Math.max(0, Math.min(t, layout.span)) / layout.span) * plot;
  const x = (t: number) => xr(runTime(t, layout.folds));
  const runNow = runTime(now, layout.folds);
  const waited = now - runNow;
  const w = (from: number, to: number) => Math.max(1.5, x(to) - x(from));
  const lane = (kind: Lane['kind'], id: string) => layout.lanes.find((l) => l.kind === kind && l.id === id);
  const clientLanes = layout.lanes.filter((l) => l.kind === 'client');
  const clientTop = clientLanes[0]?.y ?? 0;
  const clientBottom = clientLanes.length ? clientLanes[clientLanes.length - 1]!.y + clientLanes[clientLanes.length - 1]!.h : 0;
  const multi = run.resources.length > 1;
  const resIndex = (r: string) => run.resources.findIndex((x2) => x2.name === r) + 1;
  const overlaps = run.checker.resources.flatMap((r) => r.overlaps);
  const shortFence = fenceFormatter(runFences(run));
  const tickGap = layout.ticks.length > 1 ? xr(layout.ticks[1]!) - xr(layout.ticks[0]!) : Number.POSITIVE_INFINITY;
  const tickEvery = Math.max(1, Math.ceil(36 / tickGap));

  return (
    <div ref={wrap} className={styles.wrap} data-testid="timeline" data-state={live ? 'live' : 'final'}>
      <svg
        width={width}
        height={layout.height}
        role="img"
        aria-label={`Timeline of the run, ${fmtSeconds(runNow)} of run time so far${waited > 0 ? `, not counting ${fmtSeconds(waited)} spent on predictions` : ''}`}
        className={styles.svg}
      >
        <defs>
          <pattern id={`hatch-${uid}`} width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">
            <rect width="6" height="6" className={styles.hatchBg} />
            <line x1="0" y1="0" x2="0" y2="6" className={styles.hatchLine} strokeWidth="2.2" />
          </pattern>
          <pattern id={`stale-${uid}`} width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">
            <line x1="0" y1="0" x2="0" y2="6" className={styles.staleLine} strokeWidth="3" />
          </pattern>
        </defs>

        {layout.ticks.map((t, i) => (
          <g key={t}>
            <line x1={xr(t)} x2={xr(t)} y1={20} y2={layout.height - 4} className={styles.grid} />
            {/* A label every `tickEvery` lines: on a phone "0 s1 s2 s3 s" ran into one another. */}
            {i % tickEvery === 0 ? (
              <text x={xr(t)} y={14} className={styles.tick} textAnchor="middle">
                {t / 1000} s
              </text>
            ) : null}
          </g>
        ))}
        {layout.folds.map((f) => (
          <g key={`fold-${f.from}`} data-testid="timeline-fold">
            <line x1={x(f.from)} x2={x(f.from)} y1={20} y2={layout.height - 4} className={styles.fold} />
            <title>{`${fmtSeconds(f.to - f.from)} waiting for a prediction, folded out of the run's time`}</title>
          </g>
        ))}
        {layout.sections.map((s) => (
          <text key={s.label} x={8} y={s.y + 15} className={styles.section}>
            {/* SVG text does not wrap: where the whole title does not fit, its head ("Nodes"), the whole on hover. */}
            {textWidth(s.label) * 1.25 + 16 > width ? s.label.split(' — ')[0] : s.label}
            <title>{s.label}</title>
          </text>
        ))}

        {layout.lanes.map((l) => (
          <g key={`${l.kind}-${l.id}`}>
            <rect
              x={GUTTER}
              y={l.y + 1}
              width={plot}
              height={l.h - 2}
              rx={4}
              className={l.kind === 'checker' ? styles.checkLane : styles.lane}
            />
            <text x={10} y={l.y + l.h / 2 + (l.sub ? -2 : 4)} className={styles.laneLabel}>
              {l.kind === 'client' && (
                <tspan className={styles.swatch} fill={clientColor(l.id)}>
                  ●{' '}
                </tspan>
              )}
              {l.label}
            </text>
            {l.sub && (
              <text x={10} y={l.y + l.h / 2 + 11} className={styles.laneSub}>
                {l.sub}
              </text>
            )}
          </g>
        ))}

        {/* Node states: crashes, partitions, latency. */}
        {run.timeline.nodeStates
          .filter((s) => s.state !== 'up')
          .map((s) => {
            const l = lane('node', String(s.node));
            if (!l) return null;
            const to = s.to ?? now;
            return (
              <g key={`st-${s.node}-${s.from}`} data-testid={`node-state-${s.node}`} data-state={s.state}>
                <rect
                  x={x(s.from)}
                  y={l.y + 1}
                  width={w(s.from, to)}
                  height={l.h - 2}
                  className={styles[`state-${s.state}`] ?? styles.stateOther}
                  fill={s.state === 'down' || s.state === 'starting' || s.state === 'stopping' ? `url(#hatch-${uid})` : undefined}
                >
                  <title>{`node ${s.node}: ${STATE_LABEL[s.state] ?? s.state}${s.detail ? ` (${s.detail})` : ''}`}</title>
                </rect>
                {x(to) - x(s.from) > 64 && (
                  <text x={x(s.from) + 5} y={l.y + l.h - 4} className={styles.stateText}>
                    {s.state === 'slow' ? s.detail : STATE_LABEL[s.state]}
                  </text>
                )}
              </g>
            );
          })}

        {/* Quarantines: when a node sat out every vote for the run's prefix (read from its sentinel). */}
        {run.timeline.quarantines.map((q) => {
          const l = lane('node', String(q.node));
          if (!l) return null;
          const to = Math.min(q.to, now);
          const label = `quarantined · ${q.cause}`;
          return (
            <g key={`q-${q.node}-${q.from}`} data-testid="node-quarantine" data-node={q.node} data-cause={q.cause}>
              <rect x={x(q.from)} y={l.y + 1} width={w(q.from, to)} height={l.h - 2} className={styles.quarantine}>
                <title>{`node ${q.node} sits out every vote (quarantined: ${QUARANTINE_CAUSE[q.cause] ?? q.cause}) from ${fmtSeconds(q.from)} until ${fmtSeconds(q.to)}`}</title>
              </rect>
              {x(to) - x(q.from) > textWidth(label) && (
                <text x={x(q.from) + 5} y={l.y + l.h - 4} className={styles.quarantineText}>
                  {label}
                </text>
              )}
            </g>
          );
        })}

        <FenceTicks run={run} now={now} x={x} lane={lane} shortFence={shortFence} />

        {/* What each node holds. */}
        {layout.bars.map((b) => {
          const l = lane('node', String(b.node))!;
          const y = l.y + NODE_PAD + b.row * ROW_H;
          const color = clientColor(b.client);
          const label = `${b.client}${multi ? `·${resIndex(b.resource)}` : ''}`;
          return (
            <g key={`k-${b.node}-${b.resource}-${b.from}`} data-testid="node-key" data-node={b.node} data-client={b.client}>
              {b.fuseTo !== null && (
                <rect
                  x={x(b.to)}
                  y={y + 1}
                  width={w(b.to, b.fuseTo)}
                  height={ROW_H - 4}
                  rx={3}
                  fill={clientTint(b.client, 14)}
                  stroke={color}
                  strokeDasharray="3 3"
                  strokeOpacity={0.7}
                />
              )}
              <rect x={x(b.from)} y={y + 1} width={w(b.from, b.to)} height={ROW_H - 4} rx={3} fill={color}>
                <title>{`node ${b.node} holds ${b.client}'s key on ${b.resource} · ${b.fuseTo !== null ? `expires in ${fmtSeconds(b.expiresAt - now)}` : b.cut ? 'deleted before its expiry' : 'expired'}`}</title>
              </rect>
              {b.cut && <rect x={x(b.to) - 1} y={y - 1} width={2} height={ROW_H} className={styles.cut} />}
              {x(b.to) - x(b.from) > textWidth(label) && (
                <text x={x(b.from) + 4} y={y + ROW_H - 5} className={styles.barText}>
                  {label}
                </text>
              )}
            </g>
          );
        })}

        {/* Failed rounds: which client each node voted for (a split vote shows several colours at once). */}
        {run.timeline.attempts
          .filter((a) => a.outcome !== null && a.outcome !== 'granted' && a.to !== null)
          .flatMap((a) =>
            a.votes
              .filter((v) => v.vote === 'for')
              .map((v) => {
                const l = lane('node', String(v.node));
                if (!l) return null;
                return (
                  <rect
                    key={`v-${a.id}-${v.node}`}
                    x={x(a.to!) - 2}
                    y={l.y + 3}
                    width={4}
                    height={l.h - 6}
                    rx={1.5}
                    fill={clientColor(a.client)}
                    className={styles.vote}
                    data-testid="failed-vote"
                    data-client={a.client}
                    data-node={v.node}
                  >
                    <title>{`${fmtSeconds(a.to!)} · node ${v.node} voted for ${a.client}, but ${a.client} had no majority (${OUTCOME_LABEL[a.outcome!] ?? a.outcome})`}</title>
                  </rect>
                );
              }),
          )}

        {/* Markers on node and client lanes. */}
        {run.timeline.markers
          .filter((m) => m.node !== null && m.kind !== 'clean')
          .map((m, i) => {
            const l = lane('node', String(m.node))!;
            return (
              <g key={`m-${i}`} className={styles.marker}>
                <path
                  d={`M ${x(m.t) - 4} ${l.y - 1} L ${x(m.t) + 4} ${l.y - 1} L ${x(m.t)} ${l.y + 5} Z`}
                  className={styles[`mark-${m.kind}`] ?? styles.markOther}
                />
                <title>{`${fmtSeconds(m.t)} · node ${m.node}: ${m.label}`}</title>
              </g>
            );
          })}

        {/* Overlaps, drawn across the clients section. */}
        {overlaps.map((o) => (
          <rect
            key={`ov-${o.resource}-${o.from}`}
            x={x(o.from)}
            y={clientTop}
            width={w(o.from, o.to)}
            height={clientBottom - clientTop}
            className={styles.overlapBand}
          />
        ))}

        {/* Clients: pauses, beliefs, attempts, writes. */}
        {run.clients.map((c) => {
          const l = lane('client', c.name)!;
          const color = clientColor(c.name);
          return (
            <g key={`c-${c.name}`}>
              {pausesOf(run, c.name, now).map((p) => (
                <g key={`p-${p.from}`} data-testid="client-pause" data-client={c.name}>
                  <rect x={x(p.from)} y={l.y + 30} width={w(p.from, p.to)} height={6} rx={2} className={styles.pause}>
                    <title>{`${c.name} is paused (simulated: the engine runs none of its steps) from ${fmtSeconds(p.from)}`}</title>
                  </rect>
                </g>
              ))}
              {run.timeline.beliefs
                .filter((b) => b.client === c.name)
                .map((b) => {
                  const end = b.to ?? now;
                  const validEnd = Math.min(end, b.validUntil);
                  const y = l.y + 13;
                  return (
                    <g
                      key={`b-${b.resource}-${b.from}`}
                      data-testid="belief"
                      data-client={b.client}
                      data-resource={b.resource}
                      data-stale={b.stale}
                    >
                      <rect x={x(b.from)} y={y} width={w(b.from, validEnd)} height={15} rx={3} fill={color}>
                        <title>{`${c.name} believes it holds ${b.resource} (fence ${b.fence ?? 'none'}), validity until ${fmtSeconds(b.validUntil)}`}</title>
                      </rect>
                      {end > b.validUntil && (
                        <g>
                          <rect x={x(b.validUntil)} y={y} width={w(b.validUntil, end)} height={15} rx={3} fill={clientTint(c.name, 35)} />
                          <rect x={x(b.validUntil)} y={y} width={w(b.validUntil, end)} height={15} fill={`url(#stale-${uid})`}>
                            <title>{`${c.name} still believes it holds ${b.resource} after its validity ended (stale)`}</title>
                          </rect>
                        </g>
                      )}
                      {(b.to === null || b.stale) && (
                        <line x1={x(b.validUntil)} x2={x(b.validUntil)} y1={y - 4} y2={y + 19} className={styles.validityTick} />
                      )}
                      {(() => {
                        const room = x(validEnd) - x(b.from);
                        const long = `${multi ? `${b.resource} · ` : 'holds · '}fence ${shortFence(b.fence)}`;
                        const text = room > textWidth(long) ? long : room > textWidth(shortFence(b.fence)) ? shortFence(b.fence) : null;
                        return (
                          text && (
                            <text x={x(b.from) + 5} y={y + 11} className={styles.barText}>
                              {text}
                            </text>
                          )
                        );
                      })()}
                    </g>
                  );
                })}
              {run.timeline.attempts
                .filter((a) => a.client === c.name)
                .map((a) => {
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
                    <g key={`a-${a.id}`} data-testid={`attempt-${a.id}`} data-outcome={a.outcome ?? 'pending'}>
                      <line x1={x(a.from)} x2={x(to)} y1={y} y2={y} className={styles.attemptLine} />
                      {a.outcome && (
                        <circle
                          cx={x(to)}
                          cy={y}
                          r={3.2}
                          className={ok ? styles.attemptOk : a.outcome === 'LockContendedError' ? styles.attemptWarn : styles.attemptBad}
                        >
                          <title>{`${c.name} ${a.id}: ${OUTCOME_LABEL[a.outcome] ?? a.outcome} after ${a.tries} attempt${a.tries === 1 ? '' : 's'}\n${votes}`}</title>
                        </circle>
                      )}
                    </g>
                  );
                })}
              {run.timeline.writes
                .filter((wr) => wr.client === c.name)
                .map((wr, i) => (
                  <g key={`w-${i}`} data-testid="write-dot" data-fenced={wr.fenced}>
                    <path
                      d={`M ${x(wr.t)} ${l.y + 1} l 5 5 l -5 5 l -5 -5 Z`}
                      className={wr.fenced === 'accepted' ? styles.writeOk : styles.writeBad}
                    />
                    <title>{`${c.name} writes "${wr.value}" (fence ${wr.fence ?? 'none'}): plain store accepted, fenced store ${wr.fenced}`}</title>
                  </g>
                ))}
            </g>
          );
        })}

        {/* Checker lanes. */}
        {run.checker.resources
          .filter((r) => r.resource !== 'probe')
          .map((r) => {
            const l = lane('checker', r.resource)!;
            return (
              <g key={`chk-${r.resource}`} data-testid="checker-lane" data-resource={r.resource} data-state={r.ok ? 'ok' : 'violation'}>
                {r.ok && r.holders + run.timeline.beliefs.filter((b) => b.resource === r.resource).length > 0 && (
                  <text x={GUTTER + plot - 8} y={l.y + l.h / 2 + 4} textAnchor="end" className={styles.okText}>
                    ✓ one holder at a time
                  </text>
                )}
                {r.overlaps.map((o) => (
                  <g key={`o-${o.from}`} data-testid="timeline-overlap">
                    <rect x={x(o.from)} y={l.y + 3} width={w(o.from, o.to)} height={l.h - 6} rx={3} className={styles.overlap}>
                      <title>{`${o.clients.join(' and ')} both believe they hold ${r.resource} for ${fmtSeconds(o.to - o.from)}${o.bothValid ? ', both within their validity' : ' (one past its validity)'}`}</title>
                    </rect>
                    {x(o.to) - x(o.from) > textWidth(o.clients.join(' + ')) && (
                      <text x={x(o.from) + 5} y={l.y + l.h - 8} className={styles.overlapText}>{`${o.clients.join(' + ')}`}</text>
                    )}
                  </g>
                ))}
              </g>
            );
          })}

        {live && (
          <g>
            <line x1={x(now)} x2={x(now)} y1={20} y2={layout.height - 4} className={styles.nowLine} />
            <text x={x(now)} y={layout.height - 6} className={styles.nowText} textAnchor="middle">
              now
            </text>
          </g>
        )}
      </svg>
    </div>
  );
}
