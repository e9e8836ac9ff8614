/**
 * Where a lock-service pair's time goes over HTTP: the lock service as its own process
 * (scripts/lock-service-server.ts, production mode) on five local masters, N clients of one kind
 * taking fenced acquire + release pairs, and a V8 CPU profile of that process over exactly the
 * measured window (cpu-profile-preload.mjs), summarised by area (harness/cpu-profile.ts). Not part
 * of npm test. `--lean off` starts it with REDLOCK_LEAN_HTTP=off (Node's parser reads every request).
 *
 *   node --import tsx bench/profile-http.ts [--clients 1] [--kind fetch|node-http|curl|lean] [--seconds 8] [--lean on|off]
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BenchCluster } from './harness/cluster';
import { serviceDataDir, startServiceProcess, stopServiceProcess } from './harness/lock-service';
import { summariseProfile, type CpuProfile } from './harness/cpu-profile';
import { CLIENT_KINDS, CLIENT_LABELS, openClientRow, type ClientKind } from './harness/http-clients';
import { pairLoops } from './harness/pair-loops';
import { cpuMicrosPerPair, processCpuSeconds } from './harness/process-cpu';
import { percentile } from './harness/stats';
import { SCRATCH_DIR } from './run';
import { AUTH, servicePair } from './workloads/http-service-clients';
import { argValue, runScript, sleep } from './harness/util';

const clients = Number(argValue('clients', '1'));
const kind = argValue('kind', 'fetch') as ClientKind;
const seconds = Number(argValue('seconds', '8'));
const leanReader = argValue('lean', 'on');
if (leanReader !== 'on' && leanReader !== 'off') throw new Error('--lean takes on or off');
if (!CLIENT_KINDS.includes(kind)) throw new Error(`--kind takes ${CLIENT_KINDS.join(', ')}`);
if (!(clients >= 1 && clients <= 256) || !(seconds > 0 && seconds <= 120)) throw new Error('--clients 1…256, --seconds 1…120');
const log = (line: string) => console.error(`[profile ${new Date().toISOString().slice(11, 19)}] ${line}`);

async function waitForFile(dir: string, ms: number): Promise<string> {
  for (const deadline = Date.now() + ms; Date.now() < deadline; await sleep(100)) {
    const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
    if (file) {
      await sleep(200); // written in one call: let it finish
      return join(dir, file);
    }
  }
  throw new Error(`no profile in ${dir} after ${ms} ms`);
}

async function main(): Promise<void> {
  mkdirSync(SCRATCH_DIR, { recursive: true });
  const cluster = await BenchCluster.start(SCRATCH_DIR);
  const profileDir = mkdtempSync(join(SCRATCH_DIR, 'profile-'));
  const preload = pathToFileURL(join(import.meta.dirname, 'harness', 'cpu-profile-preload.mjs')).href;
  const data = serviceDataDir();
  try {
    log(`starting the lock service (lean reader ${leanReader})`);
    const service = await startServiceProcess(cluster.urls, data.dir, {
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${preload}`.trim(),
      BENCH_CPU_PROFILE_DIR: profileDir,
      REDLOCK_LEAN_HTTP: leanReader,
    });
    try {
      const pid = service.pid;
      const base = new URL(service.base);
      const row = openClientRow(kind, base, AUTH, clients);
      try {
        await pairLoops(clients, 2_000, servicePair(row.posters, 'profile-warm'));
        process.kill(pid, 'SIGUSR2');
        await sleep(300); // the profiler starts within a turn of the server's event loop
        const cpu0 = processCpuSeconds(pid);
        const r = await pairLoops(clients, seconds * 1_000, servicePair(row.posters, 'profile'));
        const cpu1 = processCpuSeconds(pid);
        process.kill(pid, 'SIGUSR2');
        const file = await waitForFile(profileDir, 15_000);
        const summary = summariseProfile(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile);
        const p50 = percentile(
          r.times.sort((a, b) => a - b),
          50,
        );
        const cpuPerPair = cpuMicrosPerPair(cpu0, cpu1, r.pairs);
        const busyUs = summary.areas.filter((a) => !a.area.startsWith('idle')).reduce((s, a) => s + a.us, 0);
        const perPair = (us: number) => (us / Math.max(1, r.pairs)).toFixed(0);
        console.log(
          `${CLIENT_LABELS[kind]}, ${clients} client(s), lean reader ${leanReader}, ${seconds} s, fenced pairs: ${r.pairs} (${r.failed} failed)`,
        );
        console.log(
          `pairs/s ${((r.pairs / seconds) | 0).toString()}, p50 per pair ${p50.toFixed(2)} ms, server CPU per pair (/proc) ${cpuPerPair.toFixed(0)} µs`,
        );
        console.log(
          `profile: ${(summary.totalUs / 1e6).toFixed(2)} s sampled, busy ${(busyUs / 1e6).toFixed(2)} s = ${perPair(busyUs)} µs per pair; ${file}`,
        );
        console.log('\n| area | share of busy time | µs per pair |\n|---|--:|--:|');
        for (const a of summary.areas) {
          const share = a.area.startsWith('idle') ? '(idle)' : `${((100 * a.us) / busyUs).toFixed(1)} %`;
          console.log(`| ${a.area} | ${share} | ${perPair(a.us)} |`);
        }
        console.log('\n| frame (self time) | µs per pair |\n|---|--:|');
        for (const t of summary.top) console.log(`| ${t.name} | ${perPair(t.us)} |`);
      } finally {
        row.close();
      }
    } finally {
      await stopServiceProcess(service);
    }
  } finally {
    await cluster.stop();
    data.remove();
  }
}

runScript(main);
