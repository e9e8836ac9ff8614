import { register } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';
import { ensureReady, lockPattern, pageLocks, snapshot } from '../../lib/inspect';
import { OUR_PREFIX, redisCpuSeconds, type BenchCluster } from '../harness/cluster';
import type { BenchContext, Workload } from '../harness/context';
import { atMost, row, type Section } from '../harness/report';
import { figure, ratios, shuffled } from '../harness/stats';
import { collectGarbage } from '../harness/util';

const KEYS_PER_NODE = 100_000;
/** Locks granted again on every node between two index snapshots (1% of them). */
const CHURN_PER_NODE = 1_000;
const TTL_MS = 600_000;
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Every node holds the same locks, each with its metadata, as our lock core writes them
 * (packages/redlock/src/value.ts): `<prefix>lock:<resource>` = a 27-character token, a space, then the
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

/**
 * Churn between two index snapshots: `ARGV[2]` locks from `ARGV[1]` on are granted again with a new
 * token (a SET with PX, as a grant after the previous holder's release: events `set` + `expire`).
 */
const REGRANT = `
local prefix, first, n, tag, ttl = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4], ARGV[5]
for i = first, first + n - 1 do
  redis.call('SET', prefix .. 'lock:' .. string.format('job-%06d', i), string.format('%s-%021d', tag, i) ..
    ' {"owner":"bench:2","host":"bench","pid":"2"}', 'PX', ttl)
end
return n
`;

async function populate(cluster: BenchCluster, count: number): Promise<void> {
  const now = String(Date.now());
  await Promise.all(
    cluster.admin.map(async (client) => {
      for (let start = 0; start < count; start += 10_000) {
        await client.eval(POPULATE, 0, OUR_PREFIX, TTL_MS, now, start, Math.min(count, start + 10_000) - 1);
      }
    }),
  );
}

/** The naive scan: SCAN MATCH COUNT 1000 per node, then GET + PTTL of the batch's keys in one pipeline. */
async function naiveScan(clients: readonly Redis[]): Promise<number> {
  const counts = await Promise.all(
    clients.map(async (client) => {
      const keys: string[] = [];
      const values: (string | null)[] = [];
      const pttls: number[] = [];
      let cursor = '0';
      do {
        const [next, batch] = await client.scan(cursor, 'MATCH', lockPattern(OUR_PREFIX), 'COUNT', 1_000);
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
    }),
  );
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
    const { lockIndex, resetLockIndex } = await import('../../lib/server/lock-index-service');
    const runtime = getRuntime();
    // The live index needs keyspace notifications; an operator turns them on for external nodes
    // (the console does it on nodes it runs). Off again at the end: the other workloads run without.
    await Promise.all(cluster.admin.map((c) => c.config('SET', 'notify-keyspace-events', 'Eg$x')));
    await Promise.all(runtime.clients.map((c) => ensureReady(c, 5_000)));
    const naiveClients = cluster.urls.map((url) => new Redis(url));
    const snapshotOptions = { keyPrefix: runtime.keyPrefix, configuredNodes: runtime.endpoints.length, driftFactor: runtime.driftFactor };
    const oursMs: number[] = [];
    const naiveMs: number[] = [];
    const coldMs: number[] = [];
    const fullMs: number[] = [];
    const earlyCount = { early: 0, runs: 0 };
    const warmMs: number[] = [];
    const freshMs: number[] = [];
    const pageMs: number[] = [];
    const indexBuildMs: number[] = [];
    const indexedMs: number[] = [];
    const indexedChurnMs: number[] = [];
    const indexCpu = { client: [] as number[], redis: [] as number[] };
    const cpu = { oursClient: [] as number[], oursRedis: [] as number[], naiveClient: [] as number[], naiveRedis: [] as number[] };
    const problems = new Set<string>();
    const pageProblems = new Set<string>();
    try {
      await snapshot(runtime.clients, snapshotOptions);
      await naiveScan(naiveClients);
      const [buildMs, built] = await timed(() => lockIndex()!.snapshot());
      indexBuildMs.push(buildMs);
      if (built.lockList.length !== count || built.nodes.some((n) => n.indexed))
        problems.add(`index build saw ${built.lockList.length} locks`);
      await listLocks({ limit: 100, fresh: '1' });
      let churnRound = 0;
      for (let run = 1; run <= options.runs; run++) {
        // The live index: nothing changed since its last snapshot, then 1% of the locks granted
        // again on every node (1,000 per node: 5,000 keys to re-read).
        const index = lockIndex()!;
        const [quiet, quietSnap] = await timed(() => index.snapshot());
        indexedMs.push(quiet);
        const regrant = CHURN_PER_NODE;
        const first = (churnRound++ * regrant) % (count - regrant);
        await Promise.all(cluster.admin.map((c) => c.eval(REGRANT, 0, OUR_PREFIX, first, regrant, `regrant${run}`, TTL_MS)));
        const [[churned, churnSnap], client, redis] = await withCpu(cluster, () => timed(() => index.snapshot()));
        indexedChurnMs.push(churned);
        indexCpu.client.push(client * 1000);
        indexCpu.redis.push(redis * 1000);
        for (const snap of [quietSnap, churnSnap]) {
          if (snap.lockList.length !== count || snap.nodes.some((n) => !n.ok || !n.indexed || n.keys !== count))
            problems.add(`indexed snapshot saw ${snap.lockList.length} locks`);
        }
        const regranted = churnSnap.lockList.at(first);
        if (
          churnSnap.nodes.some((n) => n.reread !== regrant) ||
          regranted.majorityToken !== `regrant${run}-${String(first).padStart(21, '0')}`
        ) {
          problems.add('indexed snapshot missed the re-grants');
        }
        for (const which of shuffled(['ours', 'naive'] as const)) {
          if (which === 'ours') {
            const [[ms, snap], client, redis] = await withCpu(cluster, () => timed(() => snapshot(runtime.clients, snapshotOptions)));
            oursMs.push(ms);
            cpu.oursClient.push(client * 1000);
            cpu.oursRedis.push(redis * 1000);
            const [paging] = await timed(async () => pageLocks(snap, { limit: 100 }));
            pageMs.push(paging);
            if (snap.lockList.length !== count || snap.nodes.some((n) => !n.ok || n.keys !== count))
              problems.add(`snapshot saw ${snap.lockList.length} locks`);
          } else {
            const [[ms, keys], client, redis] = await withCpu(cluster, () => timed(() => naiveScan(naiveClients)));
            naiveMs.push(ms);
            cpu.naiveClient.push(client * 1000);
            cpu.naiveRedis.push(redis * 1000);
            if (keys !== cluster.size * count) problems.add(`naive scan saw ${keys} keys`);
          }
        }
        // The Locks API's first page as the console asks for it (fresh=1&progressive=1, as after a
        // second without requests). At the console's start: no index yet, so it is built (a full
        // scan) and the first answer is an early page; then until the full first page. With the
        // index in place: fresh=1 brings it up to date. Then again at once (a snapshot < 1 s old is reused).
        resetLockIndex();
        collectGarbage();
        const start = performance.now();
        const page = await listLocks({ limit: 100, fresh: '1', progressive: '1' });
        coldMs.push(performance.now() - start);
        earlyCount.runs++;
        if (!page.complete) earlyCount.early++;
        if (page.items.length !== 100 || page.items.some((v) => v.holders !== cluster.size))
          pageProblems.add(
            `first page had ${page.items.length} rows (of ${page.total} found; ${
              page.nodes
                .filter((n) => !n.ok)
                .map((n) => `node ${n.node}: ${n.error}`)
                .join(', ') || 'every node read'
            })`,
          );
        const full = await listLocks({ limit: 100 });
        fullMs.push(performance.now() - start);
        if (!full.complete || full.items.length !== 100 || full.total !== count)
          pageProblems.add(`full first page had ${full.items.length} of ${full.total}`);
        const [fresh, freshPage] = await timed(() => listLocks({ limit: 100, fresh: '1', progressive: '1' }));
        freshMs.push(fresh);
        if (!freshPage.complete || freshPage.total !== count)
          pageProblems.add(`indexed first page had ${freshPage.items.length} of ${freshPage.total}`);
        const [warm] = await timed(() => listLocks({ limit: 100 }));
        warmMs.push(warm);
        ctx.log(`scanner: run ${run}/${options.runs} done`);
      }
    } finally {
      await Promise.all(cluster.admin.map((c) => c.config('SET', 'notify-keyspace-events', '')));
      lockIndex()?.stop();
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
          row(
            'ours: lib/inspect snapshot() (Lua batches: SCAN + MGET + PTTL, values split into token and metadata, grouped into quorum views)',
            'ms',
            ours,
            problems.size > 0 ? [...problems].join('; ') : undefined,
          ),
          row('naive: SCAN COUNT 1000 + pipelined GET + PTTL per batch (values not split or parsed, no grouping)', 'ms', figure(naiveMs)),
          row('naive / ours (same run)', '×', figure(ratios(naiveMs, oursMs))),
        ],
      },
      {
        title: "the live lock index (lib/inspect LockIndex, what the console's Locks screen uses): snapshots without a rescan",
        rows: [
          row('first snapshot: builds the index (a full scan, as above; once)', 'ms', figure(indexBuildMs)),
          row('snapshot, nothing changed since the last (a barrier per node, then the quorum views)', 'ms', figure(indexedMs)),
          row(
            `snapshot after ${CHURN_PER_NODE.toLocaleString('en-US')} locks were granted again on every node (re-reads ${(cluster.size * CHURN_PER_NODE).toLocaleString('en-US')} keys)`,
            'ms',
            figure(indexedChurnMs),
          ),
          row('naive scan / indexed snapshot after churn (same run)', '×', figure(ratios(naiveMs, indexedChurnMs))),
          row('CPU of that snapshot: client', 'ms', figure(indexCpu.client)),
          row('CPU of that snapshot: redis (5 servers)', 'ms', figure(indexCpu.redis)),
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
        title: "Locks API, first page (100 items): lib/server/inspect-service listLocks() in-process, the console's runtime clients",
        rows: [
          row(
            `at the console's start (no index yet: built by a full scan), fresh=1&progressive=1 as the Locks screen asks: first answer; early in ${earlyCount.early} of ${earlyCount.runs} runs`,
            'ms',
            cold,
            pageProblems.size > 0 ? [...pageProblems].join('; ') : undefined,
          ),
          row("at the console's start: until the full first page (the scan's end), from the same start", 'ms', figure(fullMs)),
          row('fresh=1&progressive=1 with the index in place (it catches up, then pages)', 'ms', figure(freshMs)),
          row('again at once (inspect-service reuses a snapshot for 1 s)', 'ms', figure(warmMs)),
          row('paging a snapshot already in memory (lib/inspect pageLocks, first 100)', 'ms', figure(pageMs)),
        ],
      },
    ];
    return {
      id: 'scanner',
      title: '6. Scanner',
      method:
        `${cluster.size} masters each holding the same ${count.toLocaleString('en-US')} locks and their metadata strings, keyspace notifications ` +
        "on (Eg$x). Per run: the live index's snapshot with nothing changed and after 1,000 locks per node were granted again; ours (full " +
        "scan) and the naive scan in random order; then the Locks API's first page at the console's start (index dropped: progressive, an " +
        'early page while it is built, each row read directly on every node; and until the full page), with the index in place, and warm.',
      sections,
      targets: [
        atMost(
          '6. scanner',
          `snapshot of ${cluster.size} × ${count.toLocaleString('en-US')} keys ≤ 1000 ms (the live index, after ${CHURN_PER_NODE.toLocaleString('en-US')} re-grants per node)`,
          figure(indexedChurnMs),
          1_000,
          'ms',
        ),
        atMost(
          '6. scanner',
          `full rescan of ${cluster.size} × ${count.toLocaleString('en-US')} keys ≤ 1000 ms (the index's first build)`,
          ours,
          1_000,
          'ms',
        ),
        atMost(
          '6. scanner',
          "Locks API first page ≤ 200 ms (at the console's start: progressive, while the index is built)",
          cold,
          200,
          'ms',
        ),
        atMost('6. scanner', 'Locks API first page ≤ 200 ms (fresh=1, the index in place)', figure(freshMs), 200, 'ms'),
        atMost('6. scanner', 'Locks API first page ≤ 200 ms (warm: snapshot < 1 s old)', figure(warmMs), 200, 'ms'),
      ],
      notes: [],
    };
  },
};
