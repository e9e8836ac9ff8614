import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BenchCluster } from './harness/cluster';
import type { BenchContext, Workload } from './harness/context';
import { currentLoad, machineInfo } from './harness/machine';
import { renderMarkdown, renderText, type BenchResults, type WorkloadResult } from './harness/report';
import { describeError } from './harness/util';
import { availability } from './workloads/availability';
import { degraded } from './workloads/degraded';
import { handoff } from './workloads/handoff';
import { latency } from './workloads/latency';
import { memory } from './workloads/memory';
import { scanner } from './workloads/scanner';
import { throughput } from './workloads/throughput';
import { eventStreams } from './workloads/event-streams';
import { httpService } from './workloads/http-service';
import { semaphore } from './workloads/semaphore';

export const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
/** The committed result of the latest full run. */
export const RESULTS_FILE = join(BENCH_DIR, 'results.json');
/** Where --quick and --only runs go (git-ignored), so they never replace the full result. */
export const SCRATCH_DIR = join(BENCH_DIR, 'tmp');

export const WORKLOADS: readonly Workload[] = [
  throughput,
  latency,
  handoff,
  degraded,
  availability,
  memory,
  scanner,
  eventStreams,
  httpService,
  semaphore,
];

export interface RunOptions {
  quick: boolean;
  only: string[] | null;
  markdown: boolean;
  log(line: string): void;
}

/** Set by runBench while the cluster is up, for the caller's signal and fatal-error handlers. */
export let activeCluster: BenchCluster | null = null;

function ioredisVersion(): string {
  const pkg = JSON.parse(readFileSync(join(BENCH_DIR, '..', 'node_modules', 'ioredis', 'package.json'), 'utf8')) as { version: string };
  return pkg.version;
}

export async function runBench(options: RunOptions): Promise<{ results: BenchResults; file: string; text: string }> {
  const selected = options.only ? WORKLOADS.filter((w) => options.only!.includes(w.id)) : WORKLOADS;
  const runs = options.quick ? 3 : 5;
  const started = Date.now();
  mkdirSync(SCRATCH_DIR, { recursive: true });
  const cluster = await BenchCluster.start(SCRATCH_DIR);
  activeCluster = cluster;
  const machine = machineInfo(cluster.redisVersion, ioredisVersion());
  options.log(
    `5 masters up (Redis ${cluster.redisVersion}); load average ${machine.loadAtStart.join(' / ')}; ${selected.map((w) => w.id).join(', ')}`,
  );
  const ctx: BenchContext = { cluster, options: { quick: options.quick, runs }, log: options.log };
  const workloads: WorkloadResult[] = [];
  try {
    for (const workload of selected) {
      const t0 = performance.now();
      try {
        workloads.push(await workload.run(ctx));
      } catch (err) {
        // One broken workload must not cost the others' figures: report it and go on.
        workloads.push({
          id: workload.id,
          title: workload.id,
          method: 'failed',
          sections: [],
          targets: [],
          notes: [`failed: ${describeError(err)}`],
        });
      } finally {
        await cluster.resume();
      }
      options.log(`${workload.id}: ${Math.round((performance.now() - t0) / 1000)} s`);
    }
  } finally {
    activeCluster = null;
    await cluster.stop();
  }
  machine.loadAtEnd = currentLoad();
  const results: BenchResults = {
    startedAt: new Date(started).toISOString(),
    durationS: Math.round((Date.now() - started) / 1000),
    options: { quick: options.quick, runs, only: options.only },
    machine,
    workloads,
  };
  const file = options.quick || options.only ? join(SCRATCH_DIR, 'results.json') : RESULTS_FILE;
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  const text = options.markdown ? renderMarkdown(results) : renderText(results);
  return { results, file, text };
}
