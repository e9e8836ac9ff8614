import { pick, type BenchContext, type Workload } from '../harness/context';
import { closePeers, createPeers, Ours, PEER_LABELS, type LockClient, type PeerId } from '../harness/peers';
import { atMost, row, type Section } from '../harness/report';
import { figure, shuffled } from '../harness/stats';
import { collectGarbage, mb, sleep } from '../harness/util';

const CONCURRENCY = 64;
const TTL_MS = 10_000;
const STOPPED_VARIANTS: readonly PeerId[] = ['ours', 'node-redlock', 'node-redlock-noap', 'sesame'];
const MAX_PENDING_PER_NODE = 4096;

/** `pairs` acquire + release pairs over CONCURRENCY workers (distinct resources); resolves the failures. */
async function pairs(peer: LockClient, total: number, tag: string, progress = { done: 0 }): Promise<number> {
  let started = 0;
  let failed = 0;
  const worker = async (w: number) => {
    const resource = `${tag}-${w}`;
    while (started < total) {
      started++;
      try {
        const held = await peer.acquire(resource, TTL_MS);
        await held.release();
      } catch {
        failed++;
      }
      progress.done++;
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, (_, w) => worker(w)));
  return failed;
}

interface StoppedRun {
  peakQueued: number;
  pairsPerS: number;
  rssPeakMb: number;
}

/** Node 5 SIGSTOPped for `ms` under load: how many commands wait on its connection at most. */
async function underStoppedNode(peer: LockClient, ms: number, tag: string): Promise<StoppedRun> {
  collectGarbage();
  await sleep(100);
  const rss0 = process.memoryUsage.rss();
  let peak = 0;
  let rssPeak = rss0;
  let done = 0;
  const sampler = setInterval(() => {
    peak = Math.max(peak, peer.queued(4));
    rssPeak = Math.max(rssPeak, process.memoryUsage.rss());
  }, 50);
  const t0 = performance.now();
  const end = t0 + ms;
  const worker = async (w: number) => {
    while (performance.now() < end) {
      try {
        const held = await peer.acquire(`${tag}-${w}`, TTL_MS);
        await held.release();
        done++;
      } catch {
        await sleep(1);
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, (_, w) => worker(w)));
  clearInterval(sampler);
  peak = Math.max(peak, peer.queued(4));
  rssPeak = Math.max(rssPeak, process.memoryUsage.rss());
  return { peakQueued: peak, pairsPerS: (done * 1000) / (performance.now() - t0), rssPeakMb: mb(rssPeak - rss0) };
}

export const memory: Workload = {
  id: 'memory',
  async run(ctx: BenchContext) {
    const { cluster, options } = ctx;
    const total = pick(options, 100_000, 1_000_000);
    const segments = 5;
    // V8 and the allocator take a few hundred thousand pairs to reach their steady working set
    // (the RSS trace climbs a few MB, then stays level): warm up for 20% of the run first.
    const warm = total / 5;
    const stoppedMs = pick(options, 1_000, 3_000);
    await cluster.reset();

    // Part 1: long runs of our lock core (default options: fenced), one after the other on the
    // same Redlock. RSS is read after a full GC at both ends of each run, so both readings are of
    // live memory plus what the allocator kept: without the GC, the end reading also holds the
    // garbage V8 has not collected yet (its heap grows with the allocation rate, then levels),
    // which the start reading, taken after the warm-up's GC, does not. The readings without a GC
    // are reported too, and RSS is sampled every second during each run.
    const [ours, oursFenced] = Ours.create(cluster.urls);
    const trace: { run: number; s: number; pairs: number; rssMb: number }[] = [];
    const perRun = {
      rssGcGrowth: [] as number[],
      heapGcGrowth: [] as number[],
      rssNoGcGrowth: [] as number[],
      peakOverStart: [] as number[],
      segmentGrowth: [] as number[],
      pairsPerS: [] as number[],
    };
    let firstRss = 0;
    let lastRss = 0;
    let firstHeap = 0;
    let lastHeap = 0;
    let failed = 0;
    const afterGc = async () => {
      collectGarbage();
      await sleep(100);
      return { rss: process.memoryUsage.rss(), heap: process.memoryUsage().heapUsed };
    };
    try {
      await pairs(oursFenced, warm, 'mem-warm');
      for (let run = 1; run <= options.runs; run++) {
        const start = await afterGc();
        if (run === 1) [firstRss, firstHeap] = [start.rss, start.heap];
        let peak = start.rss;
        const t0 = performance.now();
        const progress = { done: 0 };
        const sampler = setInterval(() => {
          const rss = process.memoryUsage.rss();
          peak = Math.max(peak, rss);
          trace.push({ run, s: Math.round((performance.now() - t0) / 100) / 10, pairs: progress.done, rssMb: mb(rss) });
        }, 1_000);
        let endNoGc = 0;
        try {
          let before = start.rss;
          for (let s = 0; s < segments; s++) {
            failed += await pairs(oursFenced, total / segments, `mem-${run}-${s}`, progress);
            const now = process.memoryUsage.rss();
            peak = Math.max(peak, now);
            perRun.segmentGrowth.push(mb(now - before));
            before = now;
          }
          endNoGc = process.memoryUsage.rss();
        } finally {
          clearInterval(sampler);
        }
        perRun.pairsPerS.push((total * 1000) / (performance.now() - t0));
        const end = await afterGc();
        [lastRss, lastHeap] = [end.rss, end.heap];
        perRun.rssGcGrowth.push(mb(end.rss - start.rss));
        perRun.heapGcGrowth.push(mb(end.heap - start.heap));
        perRun.rssNoGcGrowth.push(mb(endNoGc - start.rss));
        perRun.peakOverStart.push(mb(peak - start.rss));
        ctx.log(
          `memory: run ${run}/${options.runs}: RSS after GC ${mb(start.rss)} → ${mb(end.rss)} MB (without the GC ${mb(endNoGc)} MB), heap ${mb(start.heap)} → ${mb(end.heap)} MB`,
        );
      }
    } finally {
      await ours.close();
    }

    // Part 2: node 5 SIGSTOPped under load: commands waiting on its connection.
    await cluster.reset();
    const peers = await createPeers(cluster.urls);
    const stopped = new Map<PeerId, StoppedRun[]>(STOPPED_VARIANTS.map((id) => [id, []]));
    try {
      for (let run = 1; run <= options.runs; run++) {
        for (const id of shuffled(STOPPED_VARIANTS)) {
          await cluster.pause([5]);
          try {
            stopped.get(id)!.push(await underStoppedNode(peers[id], stoppedMs, `stop-${run}`));
          } finally {
            await cluster.resume([5]);
          }
          const deadline = performance.now() + 15_000;
          while (peers[id].queued(4) > 0 && performance.now() < deadline) await sleep(20);
        }
        ctx.log(`memory: stopped-node run ${run}/${options.runs} done`);
      }
    } finally {
      await cluster.resume();
      await closePeers(peers);
    }

    const rssGrowth = figure(perRun.rssGcGrowth);
    const heapGrowth = figure(perRun.heapGcGrowth);
    const pairsLabel = total.toLocaleString('en-US');
    const allPairs = (total * options.runs).toLocaleString('en-US');
    const sections: Section[] = [
      {
        title: `ours (fenced: true), ${options.runs} runs of ${pairsLabel} pairs at concurrency ${CONCURRENCY}, one after the other, after ${warm.toLocaleString('en-US')} warm-up pairs`,
        rows: [
          row(`RSS after a full GC: growth over a run of ${pairsLabel} pairs`, 'MB', rssGrowth),
          row(`heap used after a full GC: growth over a run`, 'MB', heapGrowth),
          row(
            `RSS after a full GC: growth over all ${allPairs} pairs`,
            'MB',
            figure([mb(lastRss - firstRss)]),
            `${mb(firstRss)} → ${mb(lastRss)} MB`,
          ),
          row(
            `heap used after a full GC: growth over all ${allPairs} pairs`,
            'MB',
            figure([mb(lastHeap - firstHeap)]),
            `${mb(firstHeap)} → ${mb(lastHeap)} MB`,
          ),
          row("RSS at a run's end without a GC, over its start (garbage not yet collected included)", 'MB', figure(perRun.rssNoGcGrowth)),
          row('highest RSS sampled during a run (every second), over its start', 'MB', figure(perRun.peakOverStart)),
          row(
            `RSS change per segment of ${(total / segments).toLocaleString('en-US')} pairs, without a GC`,
            'MB',
            figure(perRun.segmentGrowth),
          ),
          row('throughput during a run', 'pairs/s', figure(perRun.pairsPerS), failed > 0 ? `${failed} failed pairs` : undefined),
        ],
      },
      {
        title: `node 5 SIGSTOPped for ${stoppedMs} ms under load (concurrency ${CONCURRENCY}): commands waiting on its connection, peak`,
        rows: STOPPED_VARIANTS.map((id) => row(PEER_LABELS[id], 'commands', figure(stopped.get(id)!.map((r) => r.peakQueued)))),
      },
      {
        title:
          'the same window: pairs per second, and the highest RSS of this process (sampled every 50 ms) over its RSS after a full GC just before',
        rows: STOPPED_VARIANTS.flatMap((id) => [
          row(`${PEER_LABELS[id]}`, 'pairs/s', figure(stopped.get(id)!.map((r) => r.pairsPerS))),
          row(`${PEER_LABELS[id]}: RSS peak over the start`, 'MB', figure(stopped.get(id)!.map((r) => r.rssPeakMb))),
        ]),
      },
    ];
    return {
      id: 'memory',
      title: '5. Memory',
      method:
        `${options.runs} runs of ${pairsLabel} pairs each on one Redlock, RSS and heap read after a full GC at both ends of every run ` +
        '(and without it at the end), sampled every second in between; then node 5 SIGSTOPped under load per peer and run, its ' +
        "connection's ioredis command queue sampled every 50 ms.",
      sections,
      targets: [
        atMost('5. memory', `RSS after a full GC: growth over ${pairsLabel} pairs ≤ 5 MB`, rssGrowth, 5, 'MB'),
        atMost('5. memory', `heap used after a full GC: growth over ${pairsLabel} pairs ≤ 1 MB`, heapGrowth, 1, 'MB'),
        atMost(
          '5. memory',
          `node stopped: ours keeps ≤ maxPendingPerNode (${MAX_PENDING_PER_NODE}) commands waiting`,
          figure(stopped.get('ours')!.map((r) => r.peakQueued)),
          MAX_PENDING_PER_NODE,
          'commands',
        ),
      ],
      notes: [],
      details: { rssTrace: trace },
    };
  },
};
