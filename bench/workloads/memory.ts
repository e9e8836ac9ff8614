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

interface StoppedRun { peakQueued: number; pairsPerS: number; rssGrowthMb: number }

/** Node 5 SIGSTOPped for `ms` under load: how many commands wait on its connection at most. */
async function underStoppedNode(peer: LockClient, ms: number, tag: string): Promise<StoppedRun> {
  collectGarbage();
  const rss0 = process.memoryUsage.rss();
  let peak = 0;
  let done = 0;
  const sampler = setInterval(() => {
    peak = Math.max(peak, peer.queued(4));
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
  return { peakQueued: peak, pairsPerS: (done * 1000) / (performance.now() - t0), rssGrowthMb: mb(process.memoryUsage.rss() - rss0) };
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

    // Part 1: a long run of our lock core (default options: fenced) with RSS sampled every second.
    const [ours, oursFenced] = Ours.create(cluster.urls);
    const trace: { s: number; pairs: number; rssMb: number }[] = [];
    const segmentGrowth: number[] = [];
    let rssStart = 0;
    let rssHalf = 0;
    let rssEnd = 0;
    let rssPeak = 0;
    let heapStart = 0;
    let heapEnd = 0;
    let failed = 0;
    let pairsPerS = 0;
    try {
      await pairs(oursFenced, warm, 'mem-warm');
      collectGarbage();
      await sleep(100);
      rssStart = process.memoryUsage.rss();
      heapStart = process.memoryUsage().heapUsed;
      const t0 = performance.now();
      const progress = { done: 0 };
      const sampler = setInterval(() => {
        const rss = process.memoryUsage.rss();
        rssPeak = Math.max(rssPeak, rss);
        trace.push({ s: Math.round((performance.now() - t0) / 100) / 10, pairs: progress.done, rssMb: mb(rss) });
      }, 1_000);
      try {
        let before = rssStart;
        for (let s = 0; s < segments; s++) {
          failed += await pairs(oursFenced, total / segments, `mem-${s}`, progress);
          const now = process.memoryUsage.rss();
          if (s === Math.floor(segments / 2) - 1) rssHalf = now;
          segmentGrowth.push(mb(now - before));
          before = now;
          ctx.log(`memory: ${progress.done} pairs, RSS ${mb(now)} MB`);
        }
      } finally {
        clearInterval(sampler);
      }
      pairsPerS = (total * 1000) / (performance.now() - t0);
      rssEnd = process.memoryUsage.rss();
      rssPeak = Math.max(rssPeak, rssEnd);
      collectGarbage();
      await sleep(100);
      heapEnd = process.memoryUsage().heapUsed;
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

    const growth = figure([mb(rssEnd - rssStart)]);
    const lastHalf = figure([mb(rssEnd - rssHalf)]);
    const lastPairs = ((total * (segments - Math.floor(segments / 2))) / segments).toLocaleString('en-US');
    const sections: Section[] = [
      {
        title: `ours (fenced: true), ${total.toLocaleString('en-US')} pairs at concurrency ${CONCURRENCY} after ${warm.toLocaleString('en-US')} warm-up pairs`,
        rows: [
          row('RSS after the warm-up', 'MB', figure([mb(rssStart)])),
          row('RSS at the end', 'MB', figure([mb(rssEnd)])),
          row('highest RSS sampled (every second)', 'MB', figure([mb(rssPeak)])),
          row('RSS growth, whole run', 'MB', growth),
          row(`RSS growth over the last ${lastPairs} pairs`, 'MB', lastHalf),
          row(`RSS growth per segment of ${(total / segments).toLocaleString('en-US')} pairs`, 'MB', figure(segmentGrowth)),
          row('heap used after a full GC: before → after the run (growth)', 'MB', figure([mb(heapEnd - heapStart)]), `${mb(heapStart)} → ${mb(heapEnd)} MB`),
          row('throughput during the run', 'pairs/s', figure([pairsPerS]), failed > 0 ? `${failed} failed pairs` : undefined),
        ],
      },
      {
        title: `node 5 SIGSTOPped for ${stoppedMs} ms under load (concurrency ${CONCURRENCY}): commands waiting on its connection, peak`,
        rows: STOPPED_VARIANTS.map((id) => row(PEER_LABELS[id], 'commands', figure(stopped.get(id)!.map((r) => r.peakQueued)))),
      },
      {
        title: 'the same window: pairs per second, and RSS growth of this process',
        rows: STOPPED_VARIANTS.flatMap((id) => [
          row(`${PEER_LABELS[id]}`, 'pairs/s', figure(stopped.get(id)!.map((r) => r.pairsPerS))),
          row(`${PEER_LABELS[id]}: RSS growth`, 'MB', figure(stopped.get(id)!.map((r) => r.rssGrowthMb))),
        ]),
      },
    ];
    return {
      id: 'memory',
      title: '5. Memory',
      method: `RSS of this process sampled every second over ${total.toLocaleString('en-US')} pairs (5 segments); then node 5 SIGSTOPped under ` +
        'load per peer and run, its connection\'s ioredis command queue sampled every 50 ms.',
      sections,
      targets: [
        atMost('5. memory', `RSS growth over ${total.toLocaleString('en-US')} pairs ≤ 5 MB`, growth, 5, 'MB'),
        atMost('5. memory', `RSS level: growth over the last ${lastPairs} pairs ≤ 2 MB`, lastHalf, 2, 'MB'),
        atMost('5. memory', `node stopped: ours keeps ≤ maxPendingPerNode (${MAX_PENDING_PER_NODE}) commands waiting`,
          figure(stopped.get('ours')!.map((r) => r.peakQueued)), MAX_PENDING_PER_NODE, 'commands'),
      ],
      notes: [],
      details: { rssTrace: trace },
    };
  },
};
