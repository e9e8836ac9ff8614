/**
 * One measured run of a lock core build (the A/B driver, bench/ab/run.ts, starts one process per run):
 * `concurrency` loops, each acquiring and releasing its own resource, for `ms` after a warm-up.
 * argv: <core index.ts> <urls, comma-separated> <fenced 0|1> <concurrency> <ms>. Prints one JSON line:
 * pairs per second, p50 of a pair (ms), client CPU and Redis CPU per pair (µs), commands per pair.
 */
import { pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';
import type * as Core from '@redlock-console/redlock';

const [corePath, urlList, fencedArg, concurrencyArg, msArg] = process.argv.slice(2);
const core = (await import(pathToFileURL(corePath!).href)) as typeof Core;
const urls = urlList!.split(',');
const fenced = fencedArg === '1';
const concurrency = Number(concurrencyArg);
const ms = Number(msArg);
const admin = urls.map((url) => new Redis(url));

async function serverTotals(): Promise<{ cpuS: number; commands: number }> {
  let cpuS = 0;
  let commands = 0;
  for (const a of admin) {
    const info = await a.info();
    cpuS += Number(/used_cpu_user:([\d.]+)/.exec(info)?.[1] ?? 0) + Number(/used_cpu_sys:([\d.]+)/.exec(info)?.[1] ?? 0);
    commands += Number(/total_commands_processed:(\d+)/.exec(info)?.[1] ?? 0);
  }
  return { cpuS, commands };
}

const redlock = new core.Redlock(urls, { keyPrefix: `ab:${process.pid}:`, maxTtlMs: 10_000 });
await redlock.markNodesClean();
const latencies: number[] = [];
async function run(forMs: number): Promise<number> {
  let pairs = 0;
  const end = performance.now() + forMs;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, w) => {
      while (performance.now() < end) {
        const t = performance.now();
        const lock = await redlock.acquire(`w${w}`, 10_000, { fenced });
        await lock.release();
        latencies.push(performance.now() - t);
        pairs++;
      }
    }),
  );
  return pairs;
}

await run(Math.min(1_500, ms / 2));
latencies.length = 0;
const before = await serverTotals();
const cpu0 = process.cpuUsage();
const pairs = await run(ms);
const cpu = process.cpuUsage(cpu0);
const after = await serverTotals();
latencies.sort((a, b) => a - b);
console.log(
  JSON.stringify({
    pairsPerS: pairs / (ms / 1000),
    p50Ms: latencies[latencies.length >> 1] ?? null,
    clientUsPerPair: (cpu.user + cpu.system) / pairs,
    redisUsPerPair: ((after.cpuS - before.cpuS) * 1e6) / pairs,
    commandsPerPair: (after.commands - before.commands) / pairs,
  }),
);
await redlock.quit();
for (const a of admin) a.disconnect();
