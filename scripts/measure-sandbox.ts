/**
 * What the teaching sandbox costs while idle (start it with the console, or at the first
 * run?): starts one in a fresh directory, as `npm start` does, then reads each redis-server's RSS
 * and the CPU it used over `seconds` (default 60) from /proc. Linux only.
 *
 *   node --import tsx scripts/measure-sandbox.ts [seconds]
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_SETTINGS } from '@redlock-console/redlock';
import { startScenarioSandbox } from '../lib/cluster/sandbox';

const seconds = Number(process.argv[2] ?? 60);
const ticks = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return Number(fields[11]) + Number(fields[12]); // utime + stime, in clock ticks (1/100 s)
};
const rssKb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'redlock-sandbox-cost-'));
  const t0 = performance.now();
  const sandbox = await startScenarioSandbox({ dataDir: dir, keyPrefix: DEFAULT_SETTINGS.keyPrefix, maxTtlMs: 60_000 });
  const startMs = Math.round(performance.now() - t0);
  try {
    const pids = sandbox.supervisor.nodes().map((n) => n.pid!);
    await new Promise((r) => setTimeout(r, 2_000));
    const before = pids.map(ticks);
    const cpu = process.cpuUsage();
    await new Promise((r) => setTimeout(r, seconds * 1_000));
    const used = pids.map((pid, i) => ticks(pid) - before[i]!);
    const own = process.cpuUsage(cpu);
    const rss = pids.map(rssKb);
    console.log(
      JSON.stringify({
        startMs,
        seconds,
        redisRssMb: rss.map((kb) => Math.round(kb / 102.4) / 10),
        redisRssTotalMb: Math.round(rss.reduce((a, b) => a + b, 0) / 102.4) / 10,
        redisCpuPercentOfOneCore: used.map((t) => Math.round((t / seconds) * 100) / 100),
        proxiesAndSupervisorCpuMs: Math.round((own.user + own.system) / 1_000),
      }),
    );
  } finally {
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

void main();
