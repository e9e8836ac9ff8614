import { Redlock } from '@redlock-console/redlock';
import { MAX_TTL_MS, OUR_PREFIX } from '../harness/cluster';
import { pick, type BenchContext, type Workload } from '../harness/context';
import { closePeers, createPeers, PEER_LABELS, type LockClient, type PeerId } from '../harness/peers';
import { atMost, row, type Row, type Section } from '../harness/report';
import { figure, percentile, ratios, Samples } from '../harness/stats';
import { collectGarbage } from '../harness/util';

/**
 * A diagnostic beside the peers: our lock core with the data-loss quarantine turned off, i.e.
 * without the epoch read after each grant. Never a configuration to run (a node that lost its
 * data could then vote for a second holder); it shows what that check costs at concurrency 1.
 */
const NO_QUARANTINE = 'diagnostic';
type Variant = PeerId | typeof NO_QUARANTINE;
const VARIANTS: readonly Variant[] = [
  'ours',
  'ours-fenced',
  'raw',
  'raw-noap',
  'node-redlock',
  'node-redlock-noap',
  'semaphore',
  'semaphore-noap',
  'universal',
  'universal-noap',
  'sesame',
  NO_QUARANTINE,
];
/** Each peer library and its setups: its best p50 in a run is the faster setup's (say which won). */
const LIBRARIES: ReadonlyArray<{ name: string; setups: readonly PeerId[] }> = [
  { name: 'node-redlock', setups: ['node-redlock', 'node-redlock-noap'] },
  { name: 'redis-semaphore', setups: ['semaphore', 'semaphore-noap'] },
  { name: 'redlock-universal', setups: ['universal', 'universal-noap'] },
  { name: '@sesamecare-oss/redlock', setups: ['sesame'] },
];
const LABELS: Record<Variant, string> = { ...PEER_LABELS, [NO_QUARANTINE]: 'diagnostic: ours (fenced: false, quarantine: false)' };
const TTL_MS = 10_000;
/** Pairs per peer before moving to the next: peers take turns, so a load spike hits them all. */
const BLOCK = 50;

async function block(
  peer: Pick<LockClient, 'acquire'>,
  samples: Samples,
  count: number,
  errors: { n: number },
  cpu = { us: 0 },
): Promise<void> {
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    try {
      const held = await peer.acquire('latency', TTL_MS);
      await held.release();
      samples.push(performance.now() - t0);
    } catch {
      errors.n++;
    }
  }
  const used = process.cpuUsage(cpu0);
  cpu.us += used.user + used.system;
}

export const latency: Workload = {
  id: 'latency',
  async run(ctx: BenchContext) {
    const { cluster, options } = ctx;
    const pairs = pick(options, 1_000, 3_000);
    await cluster.reset();
    const noQuarantine = new Redlock([...cluster.urls], { keyPrefix: OUR_PREFIX, maxTtlMs: MAX_TTL_MS, quarantine: false });
    const peers: Record<Variant, Pick<LockClient, 'acquire'>> = {
      ...(await createPeers(cluster.urls)),
      [NO_QUARANTINE]: { acquire: (resource, ttlMs) => noQuarantine.acquire(resource, ttlMs, { fenced: false }) },
    };
    const p50 = new Map<Variant, number[]>(VARIANTS.map((id) => [id, []]));
    const p99 = new Map<Variant, number[]>(VARIANTS.map((id) => [id, []]));
    const errors = new Map<Variant, { n: number }>(VARIANTS.map((id) => [id, { n: 0 }]));
    const clientUs = new Map<Variant, number[]>(VARIANTS.map((id) => [id, []]));
    try {
      for (const id of VARIANTS) await block(peers[id], new Samples(), 200, { n: 0 });
      for (let run = 1; run <= options.runs; run++) {
        const samples = new Map<Variant, Samples>(VARIANTS.map((id) => [id, new Samples()]));
        const cpu = new Map<Variant, { us: number }>(VARIANTS.map((id) => [id, { us: 0 }]));
        collectGarbage();
        // The collection costs the peers their optimized code (see slice() in throughput.ts):
        // compiled again here, unmeasured.
        for (const id of VARIANTS) await block(peers[id], new Samples(), 100, { n: 0 });
        for (let done = 0; done < pairs; done += BLOCK) {
          for (const id of VARIANTS) await block(peers[id], samples.get(id)!, Math.min(BLOCK, pairs - done), errors.get(id)!, cpu.get(id)!);
        }
        for (const id of VARIANTS) {
          clientUs.get(id)!.push(cpu.get(id)!.us / Math.max(1, samples.get(id)!.length));
          const sorted = samples.get(id)!.sorted();
          p50.get(id)!.push(percentile(sorted, 50));
          p99.get(id)!.push(percentile(sorted, 99));
        }
        ctx.log(`latency: run ${run}/${options.runs} done`);
      }
    } finally {
      const { [NO_QUARANTINE]: _, ...libraries } = peers;
      await closePeers(libraries as Record<PeerId, LockClient>);
      await noQuarantine.quit();
    }
    const note = (id: Variant) => (errors.get(id)!.n > 0 ? `${errors.get(id)!.n} failed` : undefined);
    // The floor is the faster of the two raw configurations in each run.
    const floorP50 = p50.get('raw')!.map((v, i) => Math.min(v, p50.get('raw-noap')![i]!));
    const floorP99 = p99.get('raw')!.map((v, i) => Math.min(v, p99.get('raw-noap')![i]!));
    const PEER_SETUPS = LIBRARIES.flatMap((l) => l.setups);
    // Per run, the lowest p50 among these setups.
    const bestOf = (setups: readonly PeerId[]) => p50.get(setups[0]!)!.map((_, i) => Math.min(...setups.map((s) => p50.get(s)![i]!)));
    const winners = LIBRARIES.filter((l) => l.setups.length > 1).map((l) => {
      const wins = l.setups.map((s) => p50.get(s)!.filter((v, i) => v === Math.min(...l.setups.map((o) => p50.get(o)![i]!))).length);
      return `${l.name}: ${l.setups.map((s, i) => `${LABELS[s]} fastest in ${wins[i]} of ${options.runs} runs`).join(', ')}`;
    });
    const ratioRows: Row[] = [
      row('p50: ours (fenced: false) / raw floor', '×', figure(ratios(p50.get('ours')!, floorP50))),
      row('p50: ours (fenced: true) / raw floor', '×', figure(ratios(p50.get('ours-fenced')!, floorP50))),
      row('p99: ours (fenced: false) / raw floor', '×', figure(ratios(p99.get('ours')!, floorP99))),
      row('p50: ours (fenced: false) / node-redlock + auto-pipelining', '×', figure(ratios(p50.get('ours')!, p50.get('node-redlock')!))),
      row(
        'p50: ours (fenced: false) / node-redlock, no auto-pipelining',
        '×',
        figure(ratios(p50.get('ours')!, p50.get('node-redlock-noap')!)),
      ),
      ...LIBRARIES.map((lib) =>
        row(`p50: ours (fenced: false) / ${lib.name}, its faster setup`, '×', figure(ratios(p50.get('ours')!, bestOf(lib.setups)))),
      ),
      row('p50: ours (fenced: false) / the fastest peer setup of each run', '×', figure(ratios(p50.get('ours')!, bestOf(PEER_SETUPS)))),
      row(
        'p50: ours (fenced: true) / the fastest peer setup of each run',
        '×',
        figure(ratios(p50.get('ours-fenced')!, bestOf(PEER_SETUPS))),
      ),
      row('p50: diagnostic, ours with quarantine: false / raw floor', '×', figure(ratios(p50.get(NO_QUARANTINE)!, floorP50))),
      row(
        'p50: ours (fenced: false) / the same with quarantine: false (what the epoch read costs)',
        '×',
        figure(ratios(p50.get('ours')!, p50.get(NO_QUARANTINE)!)),
      ),
    ];
    const sections: Section[] = [
      { title: 'acquire + release, p50', rows: VARIANTS.map((id) => row(LABELS[id], 'ms', figure(p50.get(id)!), note(id))) },
      { title: 'acquire + release, p99', rows: VARIANTS.map((id) => row(LABELS[id], 'ms', figure(p99.get(id)!))) },
      { title: 'ratios (same run)', rows: ratioRows },
      {
        title: 'CPU of this process per pair (client side)',
        rows: VARIANTS.map((id) => row(LABELS[id], 'µs/pair', figure(clientUs.get(id)!))),
      },
    ];
    return {
      id: 'latency',
      title: '2. Latency at concurrency 1',
      method:
        `One caller; ${pairs} acquire + release pairs per peer and run on one resource, peers taking turns in blocks of ${BLOCK}; ` +
        'p50 and p99 of each pair (acquire start to release end). The floor in the ratios is the faster raw configuration of each run.',
      sections,
      targets: [
        atMost('2. latency', 'p50 of ours (fenced: false) ≤ 1.15× the raw floor', ratioRows[0]!.figure, 1.15, '×'),
        atMost(
          '2. latency',
          "p50 of ours (fenced: false) ≤ 0.95× every peer's fastest setup",
          ratioRows.find((r) => r.name.startsWith('p50: ours (fenced: false) / the fastest peer setup'))!.figure,
          0.95,
          '×',
        ),
      ],
      notes: [
        `Which client setup won, per library: ${winners.join('; ')}.`,
        'fenced: true adds a third round trip (the fence confirmation), so it cannot come within 1.15× of a two-round-trip floor; ' +
          'the target is judged on fenced: false, which makes the same two round trips as the floor.',
        'The diagnostic row turns off the data-loss quarantine (the epoch read after each grant, which the floor does not make) ' +
          'to show what that check costs; it is never a configuration to run.',
      ],
    };
  },
};
