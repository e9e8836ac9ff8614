import { request, type ClientRequest } from 'node:http';
import { API_KEY, signIn, startConsole, stopConsole } from '../harness/console';
import { pick, type BenchContext, type Workload } from '../harness/context';
import { atLeast, row, type Section } from '../harness/report';
import { figure, ratios } from '../harness/stats';
import { sleep } from '../harness/util';

/**
 * Issue 18, finding 9: what open live-event streams (`GET /api/events`) cost the HTTP lock service.
 * The built console (`scripts/start.ts`, production server) runs against the bench's five masters;
 * 32 loops take and release locks over HTTP with an API key, once with no stream open and once
 * with STREAMS streams open (signed-in sessions reading every event), the two alternating in
 * each run. Also counted: the grants each stream was told about against the grants made (one
 * event per grant: duplicates were the finding), and node.down events (there should be none).
 */
const STREAMS = 200;
const LOOPS = 32;
const TTL_MS = 10_000;

/** One open event stream; counts the events it reads by type. */
class Stream {
  readonly counts = new Map<string, number>();
  /** It said `connected` (its subscriptions are in place). */
  connected = false;
  private readonly req: ClientRequest;
  private tail = '';

  constructor(base: string, cookie: string) {
    this.req = request(`${base}/api/events`, { headers: { cookie, accept: 'text/event-stream' } }, (res) => {
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => this.read(chunk));
      res.on('error', () => undefined);
    });
    this.req.on('error', () => undefined);
    this.req.end();
  }

  count(type: string): number {
    return this.counts.get(type) ?? 0;
  }

  reset(): void {
    this.counts.clear();
  }

  close(): void {
    this.req.destroy();
  }

  private read(chunk: string): void {
    const text = this.tail + chunk;
    const lines = text.split('\n');
    this.tail = lines.pop()!;
    for (const line of lines) {
      if (line.startsWith(': connected')) this.connected = true;
      if (!line.startsWith('event: ')) continue;
      const type = line.slice('event: '.length);
      this.counts.set(type, (this.counts.get(type) ?? 0) + 1);
    }
  }
}

/** LOOPS loops of acquire + release over HTTP for `ms`: pairs done and failures. */
async function lockLoops(base: string, ms: number, tag: string): Promise<{ pairs: number; grants: number; failed: number }> {
  const headers = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' };
  const until = performance.now() + ms;
  let pairs = 0;
  let grants = 0;
  let failed = 0;
  await Promise.all(
    Array.from({ length: LOOPS }, async (_, i) => {
      const resource = `events-${tag}-${i}`;
      while (performance.now() < until) {
        try {
          const granted = await fetch(`${base}/api/locks`, { method: 'POST', headers, body: JSON.stringify({ resource, ttlMs: TTL_MS }) });
          const body = (await granted.json()) as { token?: string };
          if (!granted.ok || !body.token) {
            failed++;
            continue;
          }
          grants++;
          const released = await fetch(`${base}/api/locks/${encodeURIComponent(resource)}/release`, {
            method: 'POST',
            headers,
            body: JSON.stringify({ token: body.token }),
          });
          await released.arrayBuffer();
          if (released.ok) pairs++;
          else failed++;
        } catch {
          failed++;
        }
      }
    }),
  );
  return { pairs, grants, failed };
}

export const eventStreams: Workload = {
  id: 'event-streams',
  async run(ctx: BenchContext) {
    const { cluster, options } = ctx;
    const ms = pick(options, 3_000, 5_000);
    await cluster.reset();
    // External masters: the console enables nothing itself, so publish the keyspace events it reads.
    await Promise.all(cluster.admin.map((c) => c.config('SET', 'notify-keyspace-events', 'KEA')));
    const console_ = await startConsole(cluster.urls, ctx.log);
    const without: number[] = [];
    const withStreams: number[] = [];
    const grantedPerGrant: number[] = [];
    const nodeDowns: number[] = [];
    let failed = 0;
    let unhealthy = 0;
    try {
      const cookie = await signIn(console_.base);
      await lockLoops(console_.base, 1_000, 'warm');
      for (let run = 1; run <= options.runs; run++) {
        const quiet = await lockLoops(console_.base, ms, `q${run}`);
        const streams = Array.from({ length: STREAMS }, () => new Stream(console_.base, cookie));
        // Every stream connected (its subscriptions in place) before measuring.
        await sleep(2_500);
        for (const s of streams) s.reset();
        const loud = await lockLoops(console_.base, ms, `l${run}`);
        // Late notifications (grouping window, slow streams) arrive within a moment.
        await sleep(1_000);
        // Judged on the streams that were connected throughout (a stream dropped with `resync` or
        // never connected is counted apart, not as a stream that saw nothing).
        const healthy = streams.filter((s) => s.connected && s.count('resync') === 0 && s.count('session-ended') === 0);
        unhealthy += streams.length - healthy.length;
        const granted = healthy.map((s) => s.count('lock.granted'));
        grantedPerGrant.push(granted.reduce((a, b) => a + b, 0) / Math.max(1, healthy.length) / Math.max(1, loud.grants));
        nodeDowns.push(healthy.reduce((a, s) => a + s.count('node.down'), 0) / Math.max(1, healthy.length));
        for (const s of streams) s.close();
        without.push((quiet.pairs / ms) * 1_000);
        withStreams.push((loud.pairs / ms) * 1_000);
        failed += quiet.failed + loud.failed;
        ctx.log(`event-streams: run ${run}/${options.runs} done`);
        await sleep(500);
      }
    } finally {
      await stopConsole(console_);
    }
    const ratio = figure(ratios(withStreams, without));
    const sections: Section[] = [
      {
        title: `HTTP lock service, ${LOOPS} loops of acquire + release (API key, fenced)`,
        rows: [
          row('no event stream open', 'pairs/s', figure(without), failed > 0 ? `${failed} requests failed` : undefined),
          row(`${STREAMS} event streams open`, 'pairs/s', figure(withStreams)),
          row(`with ${STREAMS} streams / without`, '×', ratio),
        ],
      },
      {
        title: 'what each stream was told',
        rows: [
          row(
            'lock.granted events per grant made (1 = no duplicates, none lost)',
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
        `The built console on the bench's masters; ${LOOPS} HTTP loops of acquire + release for ${ms / 1_000} s with no stream open, ` +
        `then with ${STREAMS} signed-in event streams open, alternating in each run (issue 18, finding 9).`,
      sections,
      targets: [
        atLeast('8. event streams (issue 18)', `${STREAMS} open streams cost ≤ 10 % of the lock service's pairs/s`, ratio, 0.9, '×'),
      ],
      notes: [],
    };
  },
};
