import { connect } from 'node:net';
import { Redlock } from '@redlock-console/redlock';
import { pick, type BenchContext, type Workload } from '../harness/context';
import { closePeers, createPeers, PEER_LABELS, type LockClient, type PeerId } from '../harness/peers';
import { atMost, row, type Row } from '../harness/report';
import { figure } from '../harness/stats';
import { bounded, describeError, sleep } from '../harness/util';

/**
 * What the safety checks and the lock core's contract cost in availability, beside the peers:
 * - one node paused for 0.3 s every second under c=64 load: single attempts (retryCount 0) that
 *   fail although four nodes answer (target 0: a quorum could grant every one of them);
 * - a majority held by keys that are not going away (a split between two foreign tokens): the
 *   commands one acquire with the library's default retries sends to a node;
 * - how long a node that crashed and restarted sits out (the delayed restart): measured with a
 *   2 s ceiling; with the default maxTtlMs it is 60 s from the process start.
 */
const VARIANTS: readonly PeerId[] = ['ours', 'ours-fenced', 'node-redlock', 'semaphore', 'universal', 'sesame'];
const CONCURRENCY = 64;
const TTL_MS = 2_000;
const PAUSE_MS = 300;
const SIT_OUT_CEILING_MS = 2_000;

async function pausedUnderLoad(
  ctx: BenchContext,
  peer: LockClient,
  seconds: number,
  tag: string,
): Promise<{ failed: number; granted: number; errors: Set<string> }> {
  const { cluster } = ctx;
  let stop = false;
  let failed = 0;
  let granted = 0;
  const errors = new Set<string>();
  const loop = async (k: number) => {
    for (let i = 0; !stop; i++) {
      const outcome = await bounded(() => peer.acquire(`${tag}-${k}-${i % 4}`, TTL_MS, true), 2_000);
      if (outcome.ok) {
        granted++;
        await outcome.value.release().catch(() => undefined);
      } else {
        failed++;
        errors.add('hung' in outcome ? 'hung' : describeError(outcome.error).split(':')[0]!);
      }
    }
  };
  const loops = Array.from({ length: CONCURRENCY }, (_, k) => loop(k));
  for (let s = 0; s < seconds; s++) {
    await sleep(1_000 - PAUSE_MS);
    const id = 1 + (s % 5);
    await cluster.pause([id]);
    await sleep(PAUSE_MS);
    await cluster.resume([id]);
  }
  stop = true;
  await Promise.all(loops);
  return { failed, granted, errors };
}

/**
 * MONITOR on one node over a plain socket: counts the commands clients send it, not the calls
 * scripts make inside (MONITOR marks those `[0 lua]`). Its own reader rather than ioredis's
 * monitor(), which under load could take a monitor line for a reply and throw ("Command queue
 * state error") out of its socket handler, ending the bench.
 */
async function monitorCommands(url: string): Promise<{ count(): number; close(): void }> {
  const { hostname, port } = new URL(url);
  const socket = connect({ host: hostname, port: Number(port) });
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let commands = 0;
  let rest = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    const lines = (rest + chunk).split('\r\n');
    rest = lines.pop() ?? '';
    for (const line of lines) if (line.startsWith('+') && line !== '+OK' && !line.includes(' lua]')) commands++;
  });
  socket.on('error', () => undefined);
  socket.write('MONITOR\r\n');
  return { count: () => commands, close: () => socket.destroy() };
}

/** Commands node 5 processed for one acquire against a split majority that never goes away. */
async function staleMajorityCommands(ctx: BenchContext, peer: LockClient, id: PeerId, run: number): Promise<number> {
  const { cluster } = ctx;
  const resource = `stale-${run}-${id}`;
  // The peer's own key for the resource (LockClient.keyOf): a split between two foreign tokens on nodes 1-3.
  const key = peer.keyOf(resource);
  for (const [i, token] of [
    [0, 'stale-a'],
    [1, 'stale-a'],
    [2, 'stale-b'],
  ] as const) {
    await cluster.admin[i]!.set(key, token, 'PX', 30_000);
  }
  const monitor = await monitorCommands(cluster.urls[4]!);
  try {
    await sleep(50);
    const before = monitor.count();
    await bounded(() => peer.acquire(resource, TTL_MS), 10_000);
    await sleep(100);
    return monitor.count() - before;
  } finally {
    monitor.close();
    for (const admin of cluster.admin.slice(0, 3)) await admin.del(key);
  }
}

/** A node crashed and restarted with aof-always: from its start until ours gets its vote again. */
async function sitOut(ctx: BenchContext, run: number): Promise<number> {
  const { cluster } = ctx;
  const supervisor = cluster.supervisor;
  await supervisor.restart(5, { persistence: 'aof-always' });
  const r = new Redlock(cluster.urls, { keyPrefix: `sit:${run}:`, maxTtlMs: SIT_OUT_CEILING_MS, retryCount: 0 });
  try {
    await r.markNodesClean();
    await (await r.acquire('warm', 1_000)).release();
    await supervisor.crash(5);
    await supervisor.restart(5, { persistence: 'aof-always' });
    const started = performance.now();
    for (;;) {
      const lock = await r.acquire(`probe-${run}`, 1_000).catch(() => null);
      if (lock) {
        const vote = lock.votes[4]!;
        await lock.release();
        if (vote.vote === 'for') return performance.now() - started;
      }
      if (performance.now() - started > 4 * SIT_OUT_CEILING_MS) return Number.NaN;
      await sleep(20);
    }
  } finally {
    await r.quit();
    await supervisor.restart(5, { persistence: 'none' });
    await cluster.reset();
  }
}

export const availability: Workload = {
  id: 'availability',
  async run(ctx: BenchContext) {
    const { cluster, options } = ctx;
    const seconds = pick(options, 3, 5);
    await cluster.reset();
    const peers = await createPeers(cluster.urls);
    const failed = new Map<PeerId, number[]>(VARIANTS.map((id) => [id, []]));
    const granted = new Map<PeerId, number[]>(VARIANTS.map((id) => [id, []]));
    const errors = new Map<PeerId, Set<string>>(VARIANTS.map((id) => [id, new Set()]));
    const stale = new Map<PeerId, number[]>(VARIANTS.map((id) => [id, []]));
    const sat: number[] = [];
    try {
      for (let run = 1; run <= options.runs; run++) {
        for (const id of VARIANTS) {
          const result = await pausedUnderLoad(ctx, peers[id], seconds, `p${run}-${id}`);
          failed.get(id)!.push(result.failed);
          granted.get(id)!.push(result.granted / seconds);
          for (const e of result.errors) errors.get(id)!.add(e);
          await cluster.resume();
          stale.get(id)!.push(await staleMajorityCommands(ctx, peers[id], id, run));
        }
        sat.push(await sitOut(ctx, run));
        ctx.log(`availability: run ${run}/${options.runs} done`);
      }
    } finally {
      await cluster.resume();
      await closePeers(peers);
    }
    const failRows: Row[] = VARIANTS.map((id) =>
      row(PEER_LABELS[id], 'failed', figure(failed.get(id)!), errors.get(id)!.size > 0 ? [...errors.get(id)!].join(', ') : undefined),
    );
    return {
      id: 'availability',
      title: '7. Availability: a paused node, a stale majority, a restarted node',
      method:
        `One node SIGSTOPped for ${PAUSE_MS} ms every second (nodes 1–5 in turn) for ${seconds} s while ${CONCURRENCY} loops each take and ` +
        `release a lock of their own with single attempts (retryCount 0): every attempt has four answering nodes. Then one acquire with the ` +
        `library's default retries against a majority held by two foreign tokens (a split that never goes away), counting the commands node 5 ` +
        `processed. Then a node (aof-always) is SIGKILLed and restarted, and we time how long it sits out with a ${SIT_OUT_CEILING_MS} ms ceiling.`,
      sections: [
        { title: `failed single attempts in ${seconds} s, one node paused 0.3 s every second, c=${CONCURRENCY}`, rows: failRows },
        { title: 'pairs/s during it', rows: VARIANTS.map((id) => row(PEER_LABELS[id], 'pairs/s', figure(granted.get(id)!))) },
        {
          title:
            'a stale split majority: commands sent to node 5 by one acquire (default retries; MONITOR, script-internal calls not counted)',
          rows: VARIANTS.map((id) => row(PEER_LABELS[id], 'commands', figure(stale.get(id)!))),
        },
        {
          title: 'a crashed node (aof-always) restarted: time until ours counts its vote again',
          rows: [row(`ceiling ${SIT_OUT_CEILING_MS} ms (the default maxTtlMs is 60,000 ms)`, 'ms', figure(sat))],
        },
      ],
      targets: [
        atMost(
          '7. availability',
          'one node paused 0.3 s every second under c=64: ours (fenced: false) fails 0 acquires',
          failRows[0]!.figure,
          0,
          'failed',
        ),
        atMost(
          '7. availability',
          'one node paused 0.3 s every second under c=64: ours (fenced: true) fails 0 acquires',
          failRows[1]!.figure,
          0,
          'failed',
        ),
      ],
      notes: [
        `A restarted node sits out its process start + maxTtlMs (the distlock page's delayed restart): the figure above is that ceiling plus the time to notice.`,
      ],
    };
  },
};
