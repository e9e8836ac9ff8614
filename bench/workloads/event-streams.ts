import { API_KEY, signIn, startConsole, stopConsole } from '../harness/console';
import { pick, type BenchContext, type Workload } from '../harness/context';
import { HttpConnection } from '../harness/http-client';
import { atLeast, row, type Section } from '../harness/report';
import { figure, ratios } from '../harness/stats';
import { StreamReaders } from '../harness/stream-readers';
import { sleep } from '../harness/util';
import { NOTIFY_FLAGS } from '../../lib/inspect/notifications';
import { redisCpuSeconds } from '../harness/cluster';
import { processTreeCpuSeconds } from '../harness/process-cpu';

/**
 * What open live-event streams (`GET /api/events`) cost the HTTP lock service.
 * The built console (`scripts/start.ts`, production server) runs against the bench's five masters;
 * 32 loops take and release locks over HTTP with an API key (keep-alive connections, the lean
 * client of workload 9), with no stream open, with one, and with STREAMS (signed-in sessions
 * reading every event, in a process of their own as browsers elsewhere would: see
 * bench/harness/stream-readers.ts), each phase with streams between two without (compared with
 * their mean). One stream costs what the events cost whatever their number (the subscriptions to
 * the masters' keyspace notifications, the nodes' poll); STREAMS against one is what each stream
 * adds. Also counted: the grants each stream was told about against the grants made (one
 * event per grant: duplicates were the finding), and node.down events (there should be none).
 */
const STREAMS = 200;
/** Each run measures one stream, then STREAMS: the events' fixed cost apart from what each stream adds. */
const STREAM_COUNTS = [1, STREAMS] as const;
/** The pause before every phase (streams connecting, or torn down). */
const PAUSE_MS = 2_500;
const LOOPS = 32;
const TTL_MS = 10_000;

/** LOOPS loops of acquire + release over HTTP for `ms`: pairs done and failures. */
async function lockLoops(base: string, ms: number, tag: string): Promise<{ pairs: number; grants: number; failed: number }> {
  const url = new URL(base);
  const conns = Array.from(
    { length: LOOPS },
    () => new HttpConnection(url.hostname, Number(url.port), { authorization: `Bearer ${API_KEY}` }),
  );
  const until = performance.now() + ms;
  let pairs = 0;
  let grants = 0;
  let failed = 0;
  try {
    await Promise.all(
      conns.map(async (conn, i) => {
        const resource = `events-${tag}-${i}`;
        while (performance.now() < until) {
          try {
            const granted = await conn.post('/api/locks', { resource, ttlMs: TTL_MS });
            if (granted.status !== 200 || typeof granted.body.token !== 'string') {
              failed++;
              continue;
            }
            grants++;
            const released = await conn.post(`/api/locks/${encodeURIComponent(resource)}/release`, { token: granted.body.token });
            if (released.status === 200) pairs++;
            else failed++;
          } catch {
            failed++;
          }
        }
      }),
    );
  } finally {
    for (const c of conns) c.close();
  }
  return { pairs, grants, failed };
}

export const eventStreams: Workload = {
  id: 'event-streams',
  async run(ctx: BenchContext) {
    const { cluster, options } = ctx;
    const ms = pick(options, 3_000, 5_000);
    await cluster.reset();
    // External masters: the console enables nothing itself, so publish the keyspace events it reads,
    // as the README tells operators to (not every class: each is work for the masters).
    await Promise.all(cluster.admin.map((c) => c.config('SET', 'notify-keyspace-events', NOTIFY_FLAGS.join(''))));
    const console_ = await startConsole(cluster.urls, ctx.log);
    /**
     * Per stream count: the loud phases' pairs/s and server CPU µs per pair (the console's processes
     * and the masters), and the mean of the quiet phases on either side of each.
     */
    const phases = new Map(
      STREAM_COUNTS.map((n) => [n, { loud: [] as number[], quiet: [] as number[], loudCpu: [] as number[], quietCpu: [] as number[] }]),
    );
    /** The console's and the masters' CPU seconds so far (null without /proc: the CPU rows are left out). */
    const serverCpu = async () => {
      const consoleCpu = processTreeCpuSeconds(console_.child.pid!);
      return consoleCpu === null ? null : consoleCpu + (await redisCpuSeconds(cluster));
    };
    /** lockLoops, and the server's CPU µs per pair while they ran. */
    const measured = async (tag: string) => {
      const cpu0 = await serverCpu();
      const result = await lockLoops(console_.base, ms, tag);
      const cpu1 = await serverCpu();
      return { ...result, cpuPerPair: cpu0 === null || cpu1 === null ? NaN : ((cpu1 - cpu0) * 1e6) / Math.max(1, result.pairs) };
    };
    const grantedPerGrant: number[] = [];
    const nodeDowns: number[] = [];
    let failed = 0;
    let unhealthy = 0;
    try {
      const cookie = await signIn(console_.base);
      await lockLoops(console_.base, 1_000, 'warm');
      // Phases with and without streams alternate, without first and last: each phase with streams
      // is judged against the phases without on either side of it (their mean), so a machine that
      // speeds up or slows down over a run (a shared VM does, by ±15 % within seconds) biases
      // neither way. Every phase starts after the same pause.
      let quietBefore = await measured('q0');
      failed += quietBefore.failed;
      let phase = 0;
      for (let run = 1; run <= options.runs; run++) {
        for (const count of STREAM_COUNTS) {
          phase++;
          const readers = await StreamReaders.open(console_.base, cookie, count);
          let loud: Awaited<ReturnType<typeof measured>>;
          try {
            // Every stream connected (its subscriptions in place) before measuring.
            await sleep(PAUSE_MS);
            await readers.reset();
            loud = await measured(`l${phase}`);
            // Late notifications (grouping window, slow streams) arrive within a moment.
            await sleep(1_000);
            // Judged on the streams that were connected throughout (a stream dropped with `resync` or
            // never connected is counted apart, not as a stream that saw nothing).
            const { streams } = await readers.report();
            const countOf = (s: (typeof streams)[number], type: string) => s.counts[type] ?? 0;
            const healthy = streams.filter((s) => s.connected && countOf(s, 'resync') === 0 && countOf(s, 'session-ended') === 0);
            unhealthy += streams.length - healthy.length;
            const granted = healthy.map((s) => countOf(s, 'lock.granted'));
            grantedPerGrant.push(granted.reduce((a, b) => a + b, 0) / Math.max(1, healthy.length) / Math.max(1, loud.grants));
            nodeDowns.push(healthy.reduce((a, s) => a + countOf(s, 'node.down'), 0) / Math.max(1, healthy.length));
          } finally {
            await readers.close();
          }
          // The streams' sessions end with their connections: the phase without streams starts after
          // the same pause as the phase with them (a teardown spilling into it must not lower the
          // baseline, nor an idle server raise it).
          await sleep(PAUSE_MS);
          const quietAfter = await measured(`q${phase}`);
          const figures = phases.get(count)!;
          figures.quiet.push(((quietBefore.pairs + quietAfter.pairs) / 2 / ms) * 1_000);
          figures.loud.push((loud.pairs / ms) * 1_000);
          figures.quietCpu.push((quietBefore.cpuPerPair + quietAfter.cpuPerPair) / 2);
          figures.loudCpu.push(loud.cpuPerPair);
          failed += quietAfter.failed + loud.failed;
          quietBefore = quietAfter;
        }
        ctx.log(`event-streams: run ${run}/${options.runs} done`);
      }
    } finally {
      await stopConsole(console_);
    }
    const one = phases.get(1)!;
    const many = phases.get(STREAMS)!;
    const oneRatios = ratios(one.loud, one.quiet);
    const manyRatios = ratios(many.loud, many.quiet);
    const ratio = figure(manyRatios);
    const withCpu = many.loudCpu.every(Number.isFinite) && one.loudCpu.every(Number.isFinite);
    // Without / with: the pairs/s a server whose CPU is the limit keeps with the streams open.
    const cpuRatio = figure(ratios(many.quietCpu, many.loudCpu));
    const sections: Section[] = [
      {
        title: `HTTP lock service, ${LOOPS} loops of acquire + release (API key, fenced)`,
        rows: [
          row('no event stream open', 'pairs/s', figure(many.quiet), failed > 0 ? `${failed} requests failed` : undefined),
          row('1 event stream open', 'pairs/s', figure(one.loud)),
          row(`${STREAMS} event streams open`, 'pairs/s', figure(many.loud)),
          row("with 1 stream / without (the events' intake of the masters' notifications, whatever the streams)", '×', figure(oneRatios)),
          row(`with ${STREAMS} streams / without`, '×', ratio),
          row(`with ${STREAMS} streams / with 1 (what the other ${STREAMS - 1} streams cost)`, '×', figure(ratios(manyRatios, oneRatios))),
        ],
      },
      ...(withCpu
        ? [
            {
              title:
                "the server's CPU per pair (the console's processes and the masters; CPU time, which a shared VM's neighbours do not move)",
              rows: [
                row('no event stream open', 'µs', figure(many.quietCpu)),
                row('1 event stream open', 'µs', figure(one.loudCpu)),
                row(`${STREAMS} event streams open`, 'µs', figure(many.loudCpu)),
                row('without / with 1 stream (the pairs/s a CPU-bound server keeps)', '×', figure(ratios(one.quietCpu, one.loudCpu))),
                row(`without / with ${STREAMS} streams (the pairs/s a CPU-bound server keeps)`, '×', cpuRatio),
              ],
            },
          ]
        : []),
      {
        title: 'what each stream was told',
        rows: [
          row(
            'grants reported per grant made, one by one or in a lock.burst (1 = no duplicates, none lost)',
            '×',
            figure(grantedPerGrant),
            unhealthy > 0 ? `${unhealthy} stream(s) dropped or never connected, left out` : undefined,
          ),
          row('node.down events per stream (no node went down)', 'events', figure(nodeDowns)),
        ],
      },
    ];
    return {
      id: 'event-streams',
      title: '8. Live event streams and the lock service',
      method:
        `The built console on the bench's masters; ${LOOPS} HTTP loops of acquire + release (keep-alive, API key) for ${ms / 1_000} s with no stream open ` +
        `with 1 and with ${STREAMS} signed-in event streams open (read by a separate process, as browsers would be), each phase with streams between two phases without (compared with their mean).`,
      sections,
      targets: [
        atLeast('8. event streams', `${STREAMS} open streams cost ≤ 10 % of the lock service's pairs/s`, ratio, 0.9, '×'),
        ...(withCpu
          ? [atLeast('8. event streams, CPU', `${STREAMS} open streams cost ≤ 10 % of the server's CPU per pair`, cpuRatio, 0.9, '×')]
          : []),
      ],
      notes: [],
    };
  },
};
