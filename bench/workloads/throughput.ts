import { redisCpuSeconds, type BenchCluster } from '../harness/cluster';
import { pick, type BenchContext, type Workload } from '../harness/context';
import { closePeers, createPeers, PEER_LABELS, type LockClient, type PeerId } from '../harness/peers';
import { atLeast, row, type Section, type TargetCheck } from '../harness/report';
import { figure, ratios, shuffled } from '../harness/stats';
import { collectGarbage } from '../harness/util';
import { scriptCosts } from './script-cost';

const VARIANTS: readonly PeerId[] = ['ours', 'ours-fenced', 'node-redlock', 'node-redlock-noap', 'semaphore', 'universal', 'sesame', 'raw'];
/** The peer libraries (auto-pipelined, their faster setup under load): ours is compared with the best of them in each run. */
const LIBRARIES: readonly PeerId[] = ['node-redlock', 'semaphore', 'universal', 'sesame'];
const CONCURRENCY = [64, 256] as const;
const TTL_MS = 10_000;
/** A worker gives up after this many failed pairs in one window (there should be none). */
const MAX_ERRORS = 100;

/** What one peer did in one run (the sum of its slices). */
interface Tally {
  pairs: number;
  ms: number;
  clientCpuUs: number;
  redisCpuS: number;
  errors: number;
}

function newTally(): Tally {
  return { pairs: 0, ms: 0, clientCpuUs: 0, redisCpuS: 0, errors: 0 };
}

/** `concurrency` workers, each acquiring and releasing its own resource in a loop until `end`. */
async function loop(
  peer: LockClient,
  concurrency: number,
  end: number,
  resourceOf: (w: number) => string,
): Promise<{ pairs: number; errors: number }> {
  let pairs = 0;
  let errors = 0;
  const worker = async (w: number) => {
    const resource = resourceOf(w);
    let failed = 0;
    while (performance.now() < end && failed < MAX_ERRORS) {
      try {
        const held = await peer.acquire(resource, TTL_MS);
        await held.release();
        pairs++;
      } catch {
        failed++;
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, (_, w) => worker(w)));
  return { pairs, errors };
}

/**
 * One slice: `concurrency` workers, each acquiring and releasing its own resource in a loop for
 * `ms`. A run is several slices per peer, the peers taking turns in a new random order each
 * round, so that the load of the shared machine (which moves within seconds) hits every peer alike.
 *
 * Before the measured window: a full garbage collection, so that each peer pays for its own
 * garbage (a major GC set off by the previous peer's allocations would otherwise land in, and be
 * charged to, this slice); then `warmMs` of the same loop, unmeasured. The collection frees the
 * hidden classes of the peer's objects, none of which are alive between slices, and V8 throws
 * away the optimized code that depends on them: without the warm-up, each slice would measure
 * the peer being compiled again (it tripled our client CPU per pair in short slices), which a
 * running service does once, not every half-second.
 */
async function slice(
  peer: LockClient,
  cluster: BenchCluster,
  concurrency: number,
  ms: number,
  warmMs: number,
  tag: string,
  into: Tally,
): Promise<void> {
  collectGarbage();
  await loop(peer, concurrency, performance.now() + warmMs, (w) => `${tag}-c${concurrency}-warm${w}`);
  const cpu0 = process.cpuUsage();
  const redis0 = await redisCpuSeconds(cluster);
  const t0 = performance.now();
  const { pairs, errors } = await loop(peer, concurrency, t0 + ms, (w) => `${tag}-c${concurrency}-w${w}`);
  into.ms += performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  into.clientCpuUs += cpu.user + cpu.system;
  into.redisCpuS += (await redisCpuSeconds(cluster)) - redis0;
  into.pairs += pairs;
  into.errors += errors;
}

export const throughput: Workload = {
  id: 'throughput',
  async run(ctx: BenchContext) {
    const { cluster, options } = ctx;
    const sliceMs = pick(options, 250, 500);
    const slices = pick(options, 4, 6);
    const warmMs = pick(options, 150, 250);
    await cluster.reset();
    const peers = await createPeers(cluster.urls);
    const results = new Map<string, Tally[]>();
    const key = (c: number, id: PeerId) => `${c}:${id}`;
    try {
      ctx.log(`throughput: warm-up`);
      for (const c of CONCURRENCY) for (const id of VARIANTS) await slice(peers[id], cluster, c, sliceMs, warmMs, 'warm', newTally());
      for (let run = 1; run <= options.runs; run++) {
        for (const c of CONCURRENCY) {
          const tallies = new Map<PeerId, Tally>(VARIANTS.map((id) => [id, newTally()]));
          for (let s = 0; s < slices; s++) {
            for (const id of shuffled(VARIANTS)) await slice(peers[id], cluster, c, sliceMs, warmMs, `r${run}`, tallies.get(id)!);
          }
          for (const id of VARIANTS) results.set(key(c, id), [...(results.get(key(c, id)) ?? []), tallies.get(id)!]);
        }
        ctx.log(`throughput: run ${run}/${options.runs} done`);
      }
    } finally {
      await closePeers(peers);
    }
    ctx.log('throughput: Redis CPU per script call');
    const costs = await scriptCosts(cluster.admin[0]!);

    const rates = (c: number, id: PeerId) => (results.get(key(c, id)) ?? []).map((t) => (t.pairs * 1000) / t.ms);
    // Per run, the highest rate among the peer libraries.
    const best = (c: number) => rates(c, LIBRARIES[0]!).map((_, i) => Math.max(...LIBRARIES.map((id) => rates(c, id)[i] ?? 0)));
    const sections: Section[] = [];
    const targets: TargetCheck[] = [];
    for (const c of CONCURRENCY) {
      sections.push({
        title: `concurrency ${c}: acquire + release pairs per second`,
        rows: VARIANTS.map((id) => {
          const errors = (results.get(key(c, id)) ?? []).reduce((sum, w) => sum + w.errors, 0);
          return row(PEER_LABELS[id], 'pairs/s', figure(rates(c, id)), errors > 0 ? `${errors} failed pairs` : undefined);
        }),
      });
      const nr = rates(c, 'node-redlock');
      const ratioRows = [
        row('ours (fenced: false) / node-redlock + auto-pipelining', '×', figure(ratios(rates(c, 'ours'), nr))),
        row('ours (fenced: true) / node-redlock + auto-pipelining', '×', figure(ratios(rates(c, 'ours-fenced'), nr))),
        row(
          'ours (fenced: false) / node-redlock, no auto-pipelining',
          '×',
          figure(ratios(rates(c, 'ours'), rates(c, 'node-redlock-noap'))),
        ),
        row('ours (fenced: false) / redis-semaphore RedlockMutex', '×', figure(ratios(rates(c, 'ours'), rates(c, 'semaphore')))),
        row('ours (fenced: false) / redlock-universal', '×', figure(ratios(rates(c, 'ours'), rates(c, 'universal')))),
        row('ours (fenced: false) / @sesamecare-oss/redlock', '×', figure(ratios(rates(c, 'ours'), rates(c, 'sesame')))),
        row('ours (fenced: false) / the best peer of each run', '×', figure(ratios(rates(c, 'ours'), best(c)))),
        row('ours (fenced: true) / the best peer of each run', '×', figure(ratios(rates(c, 'ours-fenced'), best(c)))),
        row('ours (fenced: false) / raw ioredis floor', '×', figure(ratios(rates(c, 'ours'), rates(c, 'raw')))),
      ];
      sections.push({ title: `concurrency ${c}: ratios (same run)`, rows: ratioRows });
      sections.push({
        title: `concurrency ${c}: CPU per pair, this process (client) and the five redis-servers`,
        rows: VARIANTS.flatMap((id) => {
          const ts = results.get(key(c, id)) ?? [];
          return [
            row(`${PEER_LABELS[id]}: client`, 'µs/pair', figure(ts.map((t) => t.clientCpuUs / Math.max(1, t.pairs)))),
            row(`${PEER_LABELS[id]}: redis`, 'µs/pair', figure(ts.map((t) => (t.redisCpuS * 1e6) / Math.max(1, t.pairs)))),
          ];
        }),
      });
      targets.push(
        atLeast('1. throughput', `c=${c}: ours (fenced: false) ≥ 2.5× node-redlock + auto-pipelining`, ratioRows[0]!.figure, 2.5, '×'),
      );
      targets.push(
        atLeast('1. throughput', `c=${c}: ours (fenced: true) ≥ 1.5× node-redlock + auto-pipelining`, ratioRows[1]!.figure, 1.5, '×'),
      );
      if (c === 64) {
        const bestRow = ratioRows.find((r) => r.name === 'ours (fenced: false) / the best peer of each run')!;
        targets.push(atLeast('1. throughput', 'c=64: ours (fenced: false) ≥ 2.5× the best peer', bestRow.figure, 2.5, '×'));
      }
    }
    sections.push({
      title: 'Redis CPU per call, measured alone on one node (5,000 calls pipelined 500 at a time; 5 repetitions)',
      rows: costs,
    });
    return {
      id: 'throughput',
      title: '1. Uncontended throughput',
      method:
        `${CONCURRENCY.join(' and ')} workers, each acquiring and releasing its own resource (ttl ${TTL_MS} ms) in a loop; a run gives ` +
        `each peer ${slices} slices of ${sliceMs} ms, the peers taking turns in a new random order each round; before each slice a full GC ` +
        `and ${warmMs} ms of the same loop, unmeasured (see slice() in bench/workloads/throughput.ts). CPU: process.cpuUsage() of ` +
        'this process and INFO cpu of the masters.',
      sections,
      targets,
      notes: [],
    };
  },
};
