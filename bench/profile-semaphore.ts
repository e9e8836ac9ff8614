/**
 * Where a semaphore pair's client time goes: five fresh masters, one peer of the semaphore workload
 * (`mutex-fenced`: our fenced mutex, for comparison) run by `--clients` loops in this process, and V8's profiler
 * over exactly the measured window (node:inspector, in process: our core and the peers run here),
 * summarised by area (harness/cpu-profile.ts) with the top frames. Not part of npm run bench.
 *
 *   node --import tsx bench/profile-semaphore.ts [--peer ours-fenced|ours|rs|rs-noap|mutex-fenced] [--clients 64] [--limit 4] [--permits 1] [--per 4] [--seconds 5]
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { BenchCluster, redisCpuSeconds } from './harness/cluster';
import { summariseProfile, type CpuProfile } from './harness/cpu-profile';
import { pairLoops } from './harness/pair-loops';
import { closeSemaphorePeers, createSemaphorePeers, type SemPeerId } from './harness/semaphore-peers';
import { percentile } from './harness/stats';
import { SCRATCH_DIR } from './run';
import { argValue, runScript } from './harness/util';

const peerId = argValue('peer', 'ours-fenced');
const clients = Number(argValue('clients', '64'));
const limit = Number(argValue('limit', '4'));
const permits = Number(argValue('permits', '1'));
const per = Number(argValue('per', '4'));
const seconds = Number(argValue('seconds', '5'));

async function main(): Promise<void> {
  const cluster = await BenchCluster.start(SCRATCH_DIR);
  const peers = createSemaphorePeers(cluster.urls);
  const session = new Session();
  try {
    const peer = peers[peerId as SemPeerId];
    if (!peer) throw new Error(`--peer takes one of ${Object.keys(peers).join(', ')}`);
    const pair = async (loop: number) => {
      const resource = peer.perWorker ? `p-w${loop}` : `p-s${Math.floor(loop / per)}`;
      const held = await peer.acquire(resource, limit, permits, 10_000);
      await held.release();
      return true;
    };
    await pairLoops(clients, 2_000, pair);
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 200 });
    await session.post('Profiler.start');
    const cpu0 = process.cpuUsage();
    const redis0 = await redisCpuSeconds(cluster);
    const result = await pairLoops(clients, seconds * 1_000, pair);
    const cpu = process.cpuUsage(cpu0);
    const redisS = (await redisCpuSeconds(cluster)) - redis0;
    const { profile } = (await session.post('Profiler.stop')) as { profile: CpuProfile };
    const file = join(SCRATCH_DIR, `semaphore-${peerId}-c${clients}-${Date.now()}.cpuprofile`);
    writeFileSync(file, JSON.stringify(profile));
    const summary = summariseProfile(profile, 25);
    const busyUs = summary.areas.filter((a) => !a.area.startsWith('idle')).reduce((s, a) => s + a.us, 0);
    const perPair = (us: number) => Math.round(us / Math.max(1, result.pairs));
    const sorted = Float64Array.from(result.times).sort();
    console.log(
      `${peerId}, ${clients} loops, limit ${limit}, ${permits} permits, ${per} per semaphore: ${Math.round(result.pairs / seconds)} pairs/s ` +
        `(${result.failed} failed), p50 ${percentile(sorted, 50).toFixed(3)} ms; client CPU ${perPair(cpu.user + cpu.system)} µs/pair ` +
        `(profiled), redis ${perPair(redisS * 1e6)} µs/pair; busy in the profile ${perPair(busyUs)} µs/pair; ${file}`,
    );
    console.log('\n| area | share of busy | µs per pair |\n|---|--:|--:|');
    for (const a of summary.areas)
      if (!a.area.startsWith('idle')) console.log(`| ${a.area} | ${((100 * a.us) / busyUs).toFixed(1)} % | ${perPair(a.us)} |`);
    console.log('\n| frame (self time) | µs per pair |\n|---|--:|');
    for (const t of summary.top) console.log(`| ${t.name} | ${perPair(t.us)} |`);
  } finally {
    session.disconnect();
    await closeSemaphorePeers(peers);
    await cluster.stop();
  }
}

runScript(main);
