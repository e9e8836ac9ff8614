import type { BenchCluster } from '../harness/cluster';
import { pick, type BenchContext, type Workload } from '../harness/context';
import { NodeRedlockPeer, Ours, PEER_LABELS, type Held, type LockClient, type PeerId } from '../harness/peers';
import { row, type Section } from '../harness/report';
import { figure, percentile, ratios, Samples } from '../harness/stats';
import { sleep } from '../harness/util';

const WAITERS = 16;
const TTL_MS = 10_000;
/** Time for every waiter to make its first (failed) attempt and go to sleep before the first release. */
const SETTLE_MS = 150;
const VARIANTS: readonly PeerId[] = ['ours', 'ours-fenced', 'node-redlock'];

/**
 * One holder, 16 waiters on the same resource. The holder releases; each waiter, once granted,
 * releases at once; each handoff is the time from the start of a release to the next grant.
 */
async function session(peer: LockClient, resource: string, limitMs: number): Promise<{ handoffs: number[]; failed: number }> {
  const handoffs: number[] = [];
  let failed = 0;
  let settled = 0;
  let lastRelease = 0;
  let finish!: () => void;
  const done = new Promise<void>((resolve) => {
    finish = resolve;
  });
  const onSettled = () => {
    if (++settled === WAITERS) finish();
  };
  const onGrant = (held: Held) => {
    handoffs.push(performance.now() - lastRelease);
    lastRelease = performance.now();
    held.release().catch(() => undefined);
    onSettled();
  };
  const holder = await peer.acquire(resource, TTL_MS);
  for (let i = 0; i < WAITERS; i++) {
    peer.acquire(resource, TTL_MS).then(onGrant, () => {
      failed++;
      onSettled();
    });
  }
  await sleep(SETTLE_MS);
  lastRelease = performance.now();
  await holder.release();
  const timer = sleep(limitMs);
  await Promise.race([done, timer]);
  return { handoffs, failed: failed + (WAITERS - settled) };
}

/** p50 of one parallel PING to every master: what "one round trip" costs here. */
async function roundTrip(cluster: BenchCluster): Promise<number> {
  const samples = new Samples();
  for (let i = 0; i < 200; i++) {
    const t0 = performance.now();
    await Promise.all(cluster.admin.map((c) => c.ping()));
    samples.push(performance.now() - t0);
  }
  return percentile(samples.sorted(), 50);
}

export const handoff: Workload = {
  id: 'handoff',
  async run(ctx: BenchContext) {
    const { cluster, options } = ctx;
    const sessions = pick(options, 2, 4);
    const limitMs = WAITERS * 400 + 2_000;
    await cluster.reset();
    // Enough retries that no waiter gives up; the same retry delay (200 ± 100 ms) for every library.
    const [ours, oursFenced] = Ours.create(cluster.urls, { retryCount: 10_000 });
    const peers: Record<string, LockClient> = {
      ours: ours,
      'ours-fenced': oursFenced,
      'node-redlock': new NodeRedlockPeer('node-redlock', cluster.urls, { retryCount: 10_000 }),
    };
    const p50 = new Map<PeerId, number[]>(VARIANTS.map((id) => [id, []]));
    const p99 = new Map<PeerId, number[]>(VARIANTS.map((id) => [id, []]));
    const failed = new Map<PeerId, number>(VARIANTS.map((id) => [id, 0]));
    const rtt: number[] = [];
    try {
      for (const id of VARIANTS) await session(peers[id]!, `handoff-warm-${id}`, limitMs);
      for (let run = 1; run <= options.runs; run++) {
        const samples = new Map<PeerId, Samples>(VARIANTS.map((id) => [id, new Samples()]));
        for (let s = 0; s < sessions; s++) {
          for (const id of VARIANTS) {
            const result = await session(peers[id]!, `handoff-${run}-${s}`, limitMs);
            for (const h of result.handoffs) samples.get(id)!.push(h);
            failed.set(id, failed.get(id)! + result.failed);
          }
        }
        for (const id of VARIANTS) {
          const sorted = samples.get(id)!.sorted();
          p50.get(id)!.push(percentile(sorted, 50));
          p99.get(id)!.push(percentile(sorted, 99));
        }
        rtt.push(await roundTrip(cluster));
        ctx.log(`handoff: run ${run}/${options.runs} done`);
      }
    } finally {
      await ours.close();
      await peers['node-redlock']!.close();
    }
    const note = (id: PeerId) => (failed.get(id)! > 0 ? `${failed.get(id)} waiters failed or timed out` : undefined);
    const sections: Section[] = [
      { title: 'release → next grant, p50', rows: VARIANTS.map((id) => row(PEER_LABELS[id], 'ms', figure(p50.get(id)!), note(id))) },
      { title: 'release → next grant, p99', rows: VARIANTS.map((id) => row(PEER_LABELS[id], 'ms', figure(p99.get(id)!))) },
      {
        title: 'ratios (same run) and reference',
        rows: [
          row('p50: node-redlock / ours (fenced: false)', '×', figure(ratios(p50.get('node-redlock')!, p50.get('ours')!))),
          row('p50: node-redlock / ours (fenced: true)', '×', figure(ratios(p50.get('node-redlock')!, p50.get('ours-fenced')!))),
          row('one parallel round trip to the 5 masters (PING), p50', 'ms', figure(rtt)),
        ],
      },
    ];
    return {
      id: 'handoff',
      title: '3. Contended handoff',
      method:
        `${WAITERS} waiters on one resource behind a holder; each grantee releases at once; ${sessions} sessions of ${WAITERS} handoffs ` +
        'per peer and run. Every library retries after 200 ± 100 ms; ours is also woken by the release (pub/sub).',
      sections,
      targets: [],
      notes: ['With 16 pollers the next poll comes sooner than half the retry delay: the wait is the minimum over the sleeping waiters.'],
    };
  },
};
