import { register } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';
import { ensureReady, pageLocks, snapshot } from '../../lib/inspect';
import { OUR_PREFIX, redisCpuSeconds, type BenchCluster } from '../harness/cluster';
import type { BenchContext, Workload } from '../harness/context';
import { atMost, row, type Section } from '../harness/report';
import { figure, ratios, shuffled } from '../harness/stats';
import { collectGarbage } from '../harness/util';

const KEYS_PER_NODE = 100_000;
const TTL_MS = 600_000;
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Every node holds the same locks, each with its metadata, as our lock core writes them
 * (lib/redlock/value.ts): `<prefix>lock:<resource>` = a 27-character token, a space, then the
 * holder metadata as a JSON string.
 * Written by a Lua loop on the node, 10,000 locks per call: a pipeline of a million commands
 * takes most of a minute on a busy two-core machine, this takes about a second.
 */
const POPULATE = `
local prefix, ttl, now = ARGV[1], ARGV[2], ARGV[3]
for i = tonumber(ARGV[4]), tonumber(ARGV[5]) do
  local token = string.format('token-%021d', i)
  redis.call('SET', prefix .. 'lock:' .. string.format('job-%06d', i), token .. ' ' .. string.format(
    '{"owner":"bench:1","host":"bench","pid":"1","ttlMs":"%s","extensions":"0","acquiredAt":"%s"}', ttl, now), 'PX', ttl)
end
return 1
`;

async function populate(cluster: BenchCluster, count: number): Promise<void> {
  const now = String(Date.now());
  await Promise.all(cluster.admin.map(async (client) => {
    for (let start = 0; start < count; start += 10_000) {
      await client.eval(POPULATE, 0, OUR_PREFIX, TTL_MS, now, start, Math.min(count, start + 10_000) - 1);
    }
  }));
}

/** The naive scan: SCAN MATCH COUNT 1000 per node, then GET + PTTL of the batch's keys in one pipeline. */
async function naiveScan(clients: readonly Redis[]): Promise<number> {
  const counts = await Promise.all(clients.map(async (client) => {
    const keys: string[] = [];
    const values: (string | null)[] = [];
    const pttls: number[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await client.scan(cursor, 'MATCH', `${OUR_PREFIX}lock:*`, 'COUNT', 1_000);
      cursor = next;
      if (batch.length === 0) continue;
      const pipeline = client.pipeline();
      for (const key of batch) pipeline.get(key).pttl(key);
      const replies = (await pipeline.exec()) ?? [];
      for (let i = 0; i < batch.length; i++) {
        keys.push(batch[i]!);
        values.push(replies[2 * i]?.[1] as string | null);
        pttls.push(replies[2 * i + 1]?.[1] as number);
      }
    } while (cursor !== '0');
    return keys.length;
  }));
  return counts.reduce((a, b) => a + b, 0);
}

/** lib/server modules import 'server-only', which throws outside Next.js: resolve it to its empty twin. */
let hooked = false;
function allowServerOnly(): void {
  if (hooked) return;
  hooked = true;
  const empty = pathToFileURL(join(ROOT, 'node_modules', 'server-only', 'empty.js')).href;
  const source = `export async function resolve(s, c, next) { return s === 'server-only' ? { url: ${JSON.stringify(empty)}, shortCircuit: true } : next(s, c); }`;
  register(`data:text/javascript,${encodeURIComponent(source)}`);
}

async function timed<T>(fn: () => Promise<T>): Promise<[number, T]> {
  collectGarbage();
  const t0 = performance.now();
  const value = await fn();
  return [performance.now() - t0, value];
}

/** CPU seconds of this process and of the masters while `fn` runs. */
async function withCpu<T>(cluster: BenchCluster, fn: () => Promise<T>): Promise<[T, number, number]> {
  const cpu0 = process.cpuUsage();
  const redis0 = await redisCpuSeconds(cluster);
  const value = await fn();
  const cpu = process.cpuUsage(cpu0);
  return [value, (cpu.user + cpu.system) / 1e6, (await redisCpuSeconds(cluster)) - redis0];
}

export const scanner: Workload = {
  id: 'scanner',
  async run(ctx: BenchContext) {
    const { cluster, options } = ctx;
    const count = KEYS_PER_NODE;
    await cluster.reset();
    const t0 = performance.now();
    await populate(cluster, count);
    ctx.log(`scanner: ${cluster.size} × ${count} locks written in ${Math.round(performance.now() - t0)} ms`);

    // The console's own runtime (its clients and options), pointed at the bench's masters.
    allowServerOnly();
    process.env.REDLOCK_NODES = cluster.urls.join(',');
    process.env.REDLOCK_KEY_PREFIX = OUR_PREFIX;
    delete process.env.REDLOCK_MODE;
    const { getRuntime } = await import('../../lib/server/runtime');
    const { listLocks } = await import('../../lib/server/inspect-service');
    const runtime = getRuntime();
    await Promise.all(runtime.clients.map((c) => ensureReady(c, 5_000)));
    const naiveClients = cluster.urls.map((url) => new Redis(url));
    const snapshotOptions = { keyPrefix: runtime.keyPrefix, configuredNodes: runtime.endpoints.length, driftFactor: runtime.driftFactor };
    const oursMs: number[] = [];
    const naiveMs: number[] = [];
    const coldMs: number[] = [];
    const fullMs: number[] = [];
    const earlyCount = { early: 0, runs: 0 };
    const warmMs: number[] = [];
    const pageMs: number[] = [];
    const cpu = { oursClient: [] as number[], oursRedis: [] as number[], naiveClient: [] as number[], naiveRedis: [] as number[] };
    const problems = new Set<string>();
    const pageProblems = new Set<string>();
    try {
      await snapshot(runtime.clients, snapshotOptions);
      await naiveScan(naiveClients);
      await listLocks({ limit: 100, fresh: '1' });
      for (let run = 1; run <= options.runs; run++) {
        for (const which of shuffled(['ours', 'naive'] as const)) {
          if (which === 'ours') {
            const [[ms, snap], client, redis] = await withCpu(cluster, () => timed(() => snapshot(runtime.clients, snapshotOptions)));
            oursMs.push(ms);
            cpu.oursClient.push(client * 1000);
            cpu.oursRedis.push(redis * 1000);
            const [paging] = await timed(async () => pageLocks(snap, { limit: 100 }));
            pageMs.push(paging);
            if (snap.locks.length !== count || snap.nodes.some((n) => !n.ok || n.keys !== count)) problems.add(`snapshot saw ${snap.locks.length} locks`);
          } else {
            const [[ms, keys], client, redis] = await withCpu(cluster, () => timed(() => naiveScan(naiveClients)));
            naiveMs.push(ms);
            cpu.naiveClient.push(client * 1000);
            cpu.naiveRedis.push(redis * 1000);
            if (keys !== cluster.size * count) problems.add(`naive scan saw ${keys} keys`);
          }
        }
        // The Locks API's first page as the console asks for it: cold (fresh=1 forces a new snapshot,
        // as after a second of no requests) and progressive (an early page while the scan runs);
        // then, from the same start, until the full first page (which waits for the scan's end);
        // then warm (inspect-service reuses a snapshot for 1 s after its scan ended).
        collectGarbage();
        const start = performance.now();
        const page = await listLocks({ limit: 100, fresh: '1', progressive: '1' });
        coldMs.push(performance.now() - start);
        earlyCount.runs++;
        if (!page.complete) earlyCount.early++;
        if (page.items.length !== 100 || page.items.some((v) => v.holders !== cluster.size)) pageProblems.add(`first page had ${page.items.length} rows`);
        const full = await listLocks({ limit: 100 });
        fullMs.push(performance.now() - start);
        if (!full.complete || full.items.length !== 100 || full.total !== count) pageProblems.add(`full first page had ${full.items.length} of ${full.total}`);
        const [warm] = await timed(() => listLocks({ limit: 100 }));
        warmMs.push(warm);
        ctx.log(`scanner: run ${run}/${options.runs} done`);
      }
    } finally {
      for (const c of naiveClients) c.disconnect();
      for (const c of runtime.clients) c.disconnect();
      await cluster.reset();
    }
    const ours = figure(oursMs);
    const cold = figure(coldMs);
    const sections: Section[] = [
      {
        title: `full snapshot of ${cluster.size} × ${count.toLocaleString('en-US')} lock keys (with metadata)`,
        rows: [
          row('ours: lib/inspect snapshot() (Lua batches: SCAN + MGET + PTTL, values split into token and metadata, grouped into quorum views)', 'ms', ours,
            problems.size > 0 ? [...problems].join('; ') : undefined),
          row('naive: SCAN COUNT 1000 + pipelined GET + PTTL per batch (values not split or parsed, no grouping)', 'ms', figure(naiveMs)),
          row('naive / ours (same run)', '×', figure(ratios(naiveMs, oursMs))),
        ],
      },
      {
        title: 'CPU time of one full scan: this process (client) and the five redis-servers together',
        rows: [
          row('ours: client', 'ms', figure(cpu.oursClient)),
          row('ours: redis (5 servers)', 'ms', figure(cpu.oursRedis)),
          row('naive: client', 'ms', figure(cpu.naiveClient)),
          row('naive: redis (5 servers)', 'ms', figure(cpu.naiveRedis)),
        ],
      },
      {
        title: 'Locks API, first page (100 items): lib/server/inspect-service listLocks() in-process, the console\'s runtime clients',
        rows: [
          row(`cold, progressive (fresh=1&progressive=1, as the Locks screen asks): first answer; early in ${earlyCount.early} of ${earlyCount.runs} runs`, 'ms', cold,
            pageProblems.size > 0 ? [...pageProblems].join('; ') : undefined),
          row('cold: until the full first page (the scan\'s end), from the same start', 'ms', figure(fullMs)),
          row('again at once (inspect-service reuses a snapshot for 1 s after its scan ended)', 'ms', figure(warmMs)),
          row('paging a snapshot already in memory (lib/inspect pageLocks, first 100)', 'ms', figure(pageMs)),
        ],
      },
    ];
    return {
      id: 'scanner',
      title: '6. Scanner',
      method: `${cluster.size} masters each holding the same ${count.toLocaleString('en-US')} locks and their metadata strings; ours and the naive scan ` +
        'in random order per run; then the Locks API\'s first page, cold (progressive: an early page while the scan runs, each row read ' +
        'directly on every node; and until the full page) and warm.',
      sections,
      targets: [
        atMost('6. scanner', `full snapshot of ${cluster.size} × ${count.toLocaleString('en-US')} keys ≤ 1000 ms`, ours, 1_000, 'ms'),
        atMost('6. scanner', 'Locks API first page ≤ 200 ms (cold, progressive: a fresh scan)', cold, 200, 'ms'),
        atMost('6. scanner', 'Locks API first page ≤ 200 ms (warm: snapshot < 1 s old)', figure(warmMs), 200, 'ms'),
      ],
      notes: [],
    };
  },
};
