import { redisCpuSeconds, type BenchCluster } from '../harness/cluster';
import { pick, type BenchContext, type Workload } from '../harness/context';
import { currentLoad } from '../harness/machine';
import { atLeast, atMost, row, type Row, type Section, type TargetCheck } from '../harness/report';
import {
  checkSemaphoresHold,
  closeSemaphorePeers,
  createSemaphorePeers,
  SEM_LABELS,
  type SemClient,
  type SemPeerId,
} from '../harness/semaphore-peers';
import { figure, percentile, ratios, Samples, shuffled } from '../harness/stats';
import { collectGarbage } from '../harness/util';

/** How a semaphore is used: `permits` of `limit` per acquire, `perSemaphore` workers sharing one semaphore. */
interface Shape {
  id: string;
  title: string;
  limit: number;
  permits: number;
  perSemaphore: number;
  /** Judged against the targets (the others are shown beside them). */
  target: boolean;
}

const SHAPES: readonly Shape[] = [
  { id: 'k1', title: '1 permit of 4 (RedlockSemaphore)', limit: 4, permits: 1, perSemaphore: 4, target: true },
  { id: 'k2', title: '2 permits of 8 (RedlockMultiSemaphore)', limit: 8, permits: 2, perSemaphore: 4, target: true },
  {
    id: 'k1-full',
    title: '1 permit of 4, 8 workers per semaphore (half of them wait)',
    limit: 4,
    permits: 1,
    perSemaphore: 8,
    target: false,
  },
];
/** Shapes where no worker waits: every worker's permits fit at once. */
const fits = (s: Shape) => s.perSemaphore * s.permits <= s.limit;
/** c=1 runs the shapes a single caller can have (one caller never waits for itself). */
const LATENCY_SHAPES = SHAPES.filter(fits);
const CONCURRENCY = 64;
/** c=64: the auto-pipelined client, as the throughput workload does (its faster setup under load). */
const RATE_VARIANTS: readonly SemPeerId[] = ['ours', 'ours-fenced', 'rs', 'mutex-fenced'];
/** c=1: both client setups of redis-semaphore, its faster one per run, as the latency workload does. */
const LATENCY_VARIANTS: readonly SemPeerId[] = ['ours', 'ours-fenced', 'rs', 'rs-noap', 'mutex-fenced'];
/** The variants measured in a shape: the mutex diagnostic only where no worker waits (a mutex per worker never does). */
const variantsOf = (shape: Shape, all: readonly SemPeerId[]) => all.filter((id) => id !== 'mutex-fenced' || fits(shape));
const TTL_MS = 10_000;
/** A worker gives up after this many failed pairs in one window (there should be none). */
const MAX_ERRORS = 100;
/** Pairs per peer before the next takes its turn at c=1, so a load spike hits them all. */
const BLOCK = 50;
/** The most a warm-up may take (a peer slower than its pair count allows is measured as it is). */
const WARM_CAP_MS = 5_000;
/** c=64 slices: measured ms, slices per peer and run, warm-up pairs before each (see slice()). */
const rateOptions = (options: BenchContext['options']) => ({
  sliceMs: pick(options, 500, 1_000),
  slices: pick(options, 2, 3),
  warmPairs: pick(options, 1_500, 3_000),
});
/** c=1: pairs per peer again after the run's GC, unmeasured (see slice()). */
const REWARM_PAIRS = 500;

interface Tally {
  pairs: number;
  ms: number;
  clientCpuUs: number;
  redisCpuS: number;
  errors: number;
}
const newTally = (): Tally => ({ pairs: 0, ms: 0, clientCpuUs: 0, redisCpuS: 0, errors: 0 });

/** `CONCURRENCY` workers, `shape.perSemaphore` to a semaphore, each acquiring and releasing until `end` (or `most` pairs in all). */
async function loop(peer: SemClient, shape: Shape, end: number, tag: string, most = Infinity): Promise<{ pairs: number; errors: number }> {
  let pairs = 0;
  let errors = 0;
  const worker = async (w: number) => {
    const resource = peer.perWorker ? `${tag}-${shape.id}-w${w}` : `${tag}-${shape.id}-s${Math.floor(w / shape.perSemaphore)}`;
    let failed = 0;
    while (performance.now() < end && failed < MAX_ERRORS && pairs < most) {
      try {
        const held = await peer.acquire(resource, shape.limit, shape.permits, TTL_MS);
        await held.release();
        pairs++;
      } catch {
        failed++;
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, (_, w) => worker(w)));
  return { pairs, errors };
}

/**
 * One slice, as throughput.ts's: a full GC (each peer pays for its own garbage), `warmPairs` pairs
 * unmeasured, then `ms` measured with the CPU of this process and the masters. The warm-up is
 * counted in pairs, not milliseconds: the collection throws away optimized code, V8 optimizes again
 * after so many calls, and on a loaded machine a fixed 250 ms held too few of them (at load 17, our
 * fenced semaphore measured 280–550 µs of client CPU per pair after a GC and 250 ms, 66–117 µs after
 * a GC and 3,000 pairs, 60–110 µs with no GC; redis-semaphore 157–187, 90–127 and 108–153).
 */
async function slice(peer: SemClient, cluster: BenchCluster, shape: Shape, ms: number, warmPairs: number, tag: string, into: Tally) {
  collectGarbage();
  await loop(peer, shape, performance.now() + WARM_CAP_MS, `${tag}-warm`, warmPairs);
  const cpu0 = process.cpuUsage();
  const redis0 = await redisCpuSeconds(cluster);
  const t0 = performance.now();
  const { pairs, errors } = await loop(peer, shape, t0 + ms, tag);
  into.ms += performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  into.clientCpuUs += cpu.user + cpu.system;
  into.redisCpuS += (await redisCpuSeconds(cluster)) - redis0;
  into.pairs += pairs;
  into.errors += errors;
}

/** `count` acquire + release pairs of one caller on one semaphore: each pair's time, and this process's CPU. */
async function block(peer: SemClient, shape: Shape, count: number, samples: Samples, errors: { n: number }, cpu = { us: 0 }) {
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    try {
      const held = await peer.acquire(`latency-${shape.id}`, shape.limit, shape.permits, TTL_MS);
      await held.release();
      samples.push(performance.now() - t0);
    } catch {
      errors.n++;
    }
  }
  const used = process.cpuUsage(cpu0);
  cpu.us += used.user + used.system;
}

type Runs = Map<string, number[]>;
const push = (into: Runs, key: string, value: number) => into.set(key, [...(into.get(key) ?? []), value]);
const at = (runs: Runs, key: string) => runs.get(key) ?? [];

/** c=64: per run and shape, every peer's slices in a new random order each round. */
async function measureRates(ctx: BenchContext, peers: Record<SemPeerId, SemClient>, runs: Runs, loads: string[]): Promise<void> {
  const { cluster, options } = ctx;
  const { sliceMs, slices, warmPairs } = rateOptions(options);
  for (const shape of SHAPES)
    for (const id of variantsOf(shape, RATE_VARIANTS)) await slice(peers[id], cluster, shape, sliceMs, warmPairs, 'warm', newTally());
  for (let run = 1; run <= options.runs; run++) {
    for (const shape of SHAPES) {
      const variants = variantsOf(shape, RATE_VARIANTS);
      const tallies = new Map(variants.map((id) => [id, newTally()]));
      for (let s = 0; s < slices; s++) {
        for (const id of shuffled(variants)) await slice(peers[id], cluster, shape, sliceMs, warmPairs, `r${run}s${s}`, tallies.get(id)!);
      }
      for (const [id, t] of tallies) {
        const k = `${shape.id}:${id}`;
        push(runs, `rate:${k}`, (t.pairs * 1000) / t.ms);
        push(runs, `client:${k}`, t.clientCpuUs / Math.max(1, t.pairs));
        push(runs, `redis:${k}`, (t.redisCpuS * 1e6) / Math.max(1, t.pairs));
        push(runs, `errors:${k}`, t.errors);
      }
    }
    loads.push(currentLoad().join(' / '));
    ctx.log(`semaphore: c=${CONCURRENCY} run ${run}/${options.runs} done (load ${loads.at(-1)})`);
  }
}

/** c=1: one caller, peers taking turns in blocks of BLOCK pairs. */
async function measureLatency(ctx: BenchContext, peers: Record<SemPeerId, SemClient>, runs: Runs, loads: string[]): Promise<void> {
  const { options } = ctx;
  const pairs = pick(options, 600, 2_000);
  for (const shape of LATENCY_SHAPES) for (const id of LATENCY_VARIANTS) await block(peers[id], shape, 200, new Samples(), { n: 0 });
  for (let run = 1; run <= options.runs; run++) {
    for (const shape of LATENCY_SHAPES) {
      const samples = new Map(LATENCY_VARIANTS.map((id) => [id, new Samples()]));
      const cpu = new Map(LATENCY_VARIANTS.map((id) => [id, { us: 0 }]));
      const errors = new Map(LATENCY_VARIANTS.map((id) => [id, { n: 0 }]));
      collectGarbage();
      // The collection costs the peers their optimized code (slice()): compiled again, unmeasured.
      for (const id of LATENCY_VARIANTS) await block(peers[id], shape, REWARM_PAIRS, new Samples(), { n: 0 });
      for (let done = 0; done < pairs; done += BLOCK) {
        for (const id of shuffled(LATENCY_VARIANTS))
          await block(peers[id], shape, Math.min(BLOCK, pairs - done), samples.get(id)!, errors.get(id)!, cpu.get(id)!);
      }
      for (const id of LATENCY_VARIANTS) {
        const k = `${shape.id}:${id}`;
        const sorted = samples.get(id)!.sorted();
        push(runs, `p50:${k}`, percentile(sorted, 50));
        push(runs, `p99:${k}`, percentile(sorted, 99));
        push(runs, `c1client:${k}`, cpu.get(id)!.us / Math.max(1, sorted.length));
        push(runs, `c1errors:${k}`, errors.get(id)!.n);
      }
    }
    loads.push(currentLoad().join(' / '));
    ctx.log(`semaphore: c=1 run ${run}/${options.runs} done (load ${loads.at(-1)})`);
  }
}

const failedNote = (runs: Runs, key: string) => {
  const n = at(runs, key).reduce((a, b) => a + b, 0);
  return n > 0 ? `${n} failed pairs` : undefined;
};

function rateSections(runs: Runs, targets: TargetCheck[]): Section[] {
  const sections: Section[] = [];
  for (const shape of SHAPES) {
    const k = (id: SemPeerId) => `${shape.id}:${id}`;
    const rate = (id: SemPeerId) => at(runs, `rate:${k(id)}`);
    const fencedRatio = row('ours (fenced: true) / redis-semaphore', '×', figure(ratios(rate('ours-fenced'), rate('rs'))));
    const variants = variantsOf(shape, RATE_VARIANTS);
    const diagnostic = fits(shape)
      ? [row('diagnostic: ours semaphore (fenced) / ours mutex (fenced)', '×', figure(ratios(rate('ours-fenced'), rate('mutex-fenced'))))]
      : [];
    sections.push({
      title: `c=${CONCURRENCY}, ${shape.title}: pairs per second, CPU per pair, same-run ratios`,
      rows: [
        ...variants.map((id) => row(SEM_LABELS[id], 'pairs/s', figure(rate(id)), failedNote(runs, `errors:${k(id)}`))),
        row('ours (fenced: false) / redis-semaphore', '×', figure(ratios(rate('ours'), rate('rs')))),
        fencedRatio,
        ...diagnostic,
        ...variants.flatMap((id) => [
          row(`${SEM_LABELS[id]}: client`, 'µs/pair', figure(at(runs, `client:${k(id)}`))),
          row(`${SEM_LABELS[id]}: redis`, 'µs/pair', figure(at(runs, `redis:${k(id)}`))),
        ]),
        row('client CPU per pair: ours (fenced: true) / redis-semaphore', '×', cpuRatio(runs, 'client', k)),
        row('redis CPU per pair: ours (fenced: true) / redis-semaphore', '×', cpuRatio(runs, 'redis', k)),
      ],
    });
    if (shape.target)
      targets.push(
        atLeast('semaphore', `c=${CONCURRENCY}, ${shape.title}: ours (fenced) ≥ 2× redis-semaphore's pairs/s`, fencedRatio.figure, 2, '×'),
      );
  }
  return sections;
}

const cpuRatio = (runs: Runs, kind: string, k: (id: SemPeerId) => string) =>
  figure(ratios(at(runs, `${kind}:${k('ours-fenced')}`), at(runs, `${kind}:${k('rs')}`)));

function latencySections(runs: Runs, targets: TargetCheck[]): Section[] {
  const sections: Section[] = [];
  for (const shape of LATENCY_SHAPES) {
    const k = (id: SemPeerId) => `${shape.id}:${id}`;
    const p50 = (id: SemPeerId) => at(runs, `p50:${k(id)}`);
    // Per run, redis-semaphore's faster client setup.
    const theirs = p50('rs').map((v, i) => Math.min(v, p50('rs-noap')[i]!));
    const ratioRows: Row[] = [
      row("p50: ours (fenced: false) / redis-semaphore's faster setup", '×', figure(ratios(p50('ours'), theirs))),
      row("p50: ours (fenced: true) / redis-semaphore's faster setup", '×', figure(ratios(p50('ours-fenced'), theirs))),
      row('diagnostic, p50: ours semaphore (fenced) / ours mutex (fenced)', '×', figure(ratios(p50('ours-fenced'), p50('mutex-fenced')))),
    ];
    sections.push({
      title: `c=1, ${shape.title}: acquire + release p50 and p99, client CPU per pair, same-run ratios`,
      rows: [
        ...LATENCY_VARIANTS.map((id) => row(`${SEM_LABELS[id]}: p50`, 'ms', figure(p50(id)), failedNote(runs, `c1errors:${k(id)}`))),
        ...LATENCY_VARIANTS.map((id) => row(`${SEM_LABELS[id]}: p99`, 'ms', figure(at(runs, `p99:${k(id)}`)))),
        ...ratioRows,
        ...LATENCY_VARIANTS.map((id) => row(`${SEM_LABELS[id]}: client`, 'µs/pair', figure(at(runs, `c1client:${k(id)}`)))),
      ],
    });
    if (shape.target)
      targets.push(atMost('semaphore', `c=1, ${shape.title}: p50 of ours (fenced) ≤ 1.0× redis-semaphore's`, ratioRows[1]!.figure, 1, '×'));
  }
  return sections;
}

export const semaphore: Workload = {
  id: 'semaphore',
  async run(ctx: BenchContext) {
    const { cluster, options } = ctx;
    await cluster.reset();
    const peers = createSemaphorePeers(cluster.urls);
    const runs: Runs = new Map();
    const loads = [currentLoad().join(' / ')];
    try {
      await checkSemaphoresHold(peers, cluster.urls, SHAPES);
      ctx.log(`semaphore: every peer holds a quorum (load ${loads[0]})`);
      await measureRates(ctx, peers, runs, loads);
      await measureLatency(ctx, peers, runs, loads);
    } finally {
      await closeSemaphorePeers(peers);
    }
    const targets: TargetCheck[] = [];
    const sections = [...rateSections(runs, targets), ...latencySections(runs, targets)];
    const rate = rateOptions(options);
    return {
      id: 'semaphore',
      title: '10. Semaphore: ours (slot mutexes, fenced) against redis-semaphore',
      method:
        `c=${CONCURRENCY}: ${CONCURRENCY} workers, each acquiring and releasing permits of a semaphore it shares with others of them ` +
        `(ttl ${TTL_MS} ms), per shape; each run gives each peer ${rate.slices} slices of ${rate.sliceMs} ms in a new random order ` +
        `each round, each after a full GC and ${rate.warmPairs} unmeasured pairs (a warm-up counted in pairs, not ms: slice() in ` +
        `bench/workloads/semaphore.ts). c=1: one caller on one semaphore, ${REWARM_PAIRS} pairs again after each run's GC, ` +
        'then ' +
        `peers taking turns in blocks of ${BLOCK} pairs; p50 / p99 of acquire start to release end. Every peer is first ` +
        'checked to hold its permits live on a quorum of the masters and to leave nothing after release.',
      sections,
      targets,
      notes: [
        `Load average (1 / 5 / 15 min) at the start and after each run: ${loads.join('; ')}.`,
        'redis-semaphore counts holders per node (a sorted set, admitted below `limit`) and holds at a majority of admissions: for limit ≥ 2 that ' +
          'admits more than `limit` holders without any fault, by the order concurrent requests reach the nodes (docs/semaphores.md: three holders ' +
          'of a 2-permit semaphore on five nodes). Ours is `limit` slot mutexes, never more than `limit` holders, fenced per slot: where ' +
          'redis-semaphore is faster, it is faster at a weaker guarantee.',
        'redis-semaphore runs with its defaults (retry every 10 ms, no attempt limit) but a 10 s acquire timeout and auto-refresh off; ours ' +
          'with its defaults (pub/sub wake-up on a release of any slot, 10 retries 200 ± 100 ms apart).',
      ],
    };
  },
};
