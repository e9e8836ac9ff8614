/**
 * What each master runs for one semaphore pair (acquire + release), by command: `INFO commandstats`
 * on five fresh masters before and after `--seconds` of pairs by `--clients` loops, per peer of the
 * semaphore workload, divided by pairs and nodes. The counts are exact whatever the load; the µs are
 * the masters' own accounting (a script's or a transaction's figure includes the commands it ran,
 * which are listed on their own lines too). Not part of npm run bench: it explains its semaphore rows.
 *
 *   node --import tsx bench/profile-commands.ts [--clients 1] [--peers ours-fenced,ours,rs-noap] [--seconds 3]
 */
import { BenchCluster } from './harness/cluster';
import { pairLoops } from './harness/pair-loops';
import { closeSemaphorePeers, createSemaphorePeers, type SemPeerId } from './harness/semaphore-peers';
import { SCRATCH_DIR } from './run';
import { argValue, runScript } from './harness/util';

type Stats = Map<string, { calls: number; usec: number }>;

/** INFO commandstats summed over the nodes. */
async function commandStats(cluster: BenchCluster): Promise<Stats> {
  const stats: Stats = new Map();
  for (const info of await Promise.all(cluster.admin.map((a) => a.info('commandstats')))) {
    for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) {
      const e = stats.get(m[1]!) ?? { calls: 0, usec: 0 };
      e.calls += Number(m[2]);
      e.usec += Number(m[3]);
      stats.set(m[1]!, e);
    }
  }
  return stats;
}

async function main(): Promise<void> {
  const clients = Number(argValue('clients', '1'));
  const seconds = Number(argValue('seconds', '3'));
  const ids = argValue('peers', 'ours-fenced,ours,rs-noap').split(',') as SemPeerId[];
  const cluster = await BenchCluster.start(SCRATCH_DIR);
  const peers = createSemaphorePeers(cluster.urls);
  try {
    for (const id of ids) {
      const peer = peers[id];
      if (!peer) throw new Error(`--peers takes some of ${Object.keys(peers).join(', ')}`);
      const pair = async (loop: number) => {
        const held = await peer.acquire(peer.perWorker ? `c-w${loop}` : `c-s${Math.floor(loop / 4)}`, 4, 1, 10_000);
        await held.release();
        return true;
      };
      await pairLoops(clients, 1_000, pair); // warm: connections, scripts, the first checks
      const before = await commandStats(cluster);
      const result = await pairLoops(clients, seconds * 1_000, pair);
      const after = await commandStats(cluster);
      const per = (n: number) => n / Math.max(1, result.pairs) / cluster.size;
      console.log(`\n${id}, ${clients} loop(s): ${Math.round(result.pairs / seconds)} pairs/s; per node per pair:`);
      console.log('| command | calls | µs |\n|---|--:|--:|');
      for (const [name, v] of [...after].sort(([a], [b]) => a.localeCompare(b))) {
        const b = before.get(name) ?? { calls: 0, usec: 0 };
        if (per(v.calls - b.calls) < 0.005) continue;
        console.log(`| ${name} | ${per(v.calls - b.calls).toFixed(2)} | ${per(v.usec - b.usec).toFixed(1)} |`);
      }
    }
  } finally {
    await closeSemaphorePeers(peers);
    await cluster.stop();
  }
}

runScript(main);
