/**
 * A/B of the lock core against an earlier commit, on one machine at one time: `npm run bench:ab --
 * --base <commit> [--runs 8] [--ms 4000] [--modes f64,u64,f1,u1]`. The base's core source (git archive of
 * packages/redlock/src, or lib/redlock before the core became a package) and the working tree's are copied side by side; for each mode (fenced / unfenced × c=64 / c=1) the two builds run
 * in alternating separate processes (bench/ab/worker.ts) against the same five fresh masters, the
 * order flipped every round so that load drifting on a shared box hits both alike. The result is
 * the median of each build and the median of the paired ratios (now / base): throughput, p50,
 * client and Redis CPU per pair, commands per pair. This is how "within 5 % of before" is checked
 * (docs/benchmarks.md); on a noisy box, read the CPU per pair beside the throughput.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { coreSourceDir } from '../../chaos/harness/mutant-build';
import { BenchCluster } from '../harness/cluster';

const root = join(import.meta.dirname, '..', '..');
const MODES = { f64: [1, 64], u64: [0, 64], f1: [1, 1], u1: [0, 1] } as const;
const { values } = parseArgs({
  options: {
    base: { type: 'string' },
    runs: { type: 'string', default: '8' },
    ms: { type: 'string', default: '4000' },
    modes: { type: 'string', default: 'f64,u64,f1,u1' },
  },
});
const modes = values.modes.split(',').map((m) => m.trim());
if (!values.base || modes.some((m) => !(m in MODES))) {
  console.error(
    'usage: npm run bench:ab -- --base <commit> [--runs 8] [--ms 4000] [--modes f64,u64,f1,u1]  (f/u: fenced/unfenced, 64/1: concurrency)',
  );
  process.exit(2);
}
const runs = Number(values.runs);
const ms = Number(values.ms);
if (!Number.isInteger(runs) || runs < 1 || !Number.isInteger(ms) || ms < 500) {
  console.error('bench:ab: --runs must be a whole number ≥ 1 and --ms ≥ 500');
  process.exit(2);
}

const scratch = join(tmpdir(), `redlock-ab-${process.pid}`);
mkdirSync(scratch, { recursive: true });
symlinkSync(join(root, 'node_modules'), join(scratch, 'node_modules'), 'dir');
const builds = { base: join(scratch, 'base'), now: join(scratch, 'now') };
mkdirSync(builds.base);
// Both builds end up as <build>/lib/redlock, whatever the path in their commit.
const baseSource =
  spawnSync('git', ['-C', root, 'cat-file', '-e', `${values.base}:packages/redlock/src/index.ts`]).status === 0
    ? 'packages/redlock/src'
    : 'lib/redlock';
execFileSync('sh', ['-c', `git -C "${root}" archive "${values.base}" ${baseSource} | tar -x -C "${builds.base}"`]);
if (baseSource !== 'lib/redlock') {
  mkdirSync(join(builds.base, 'lib'), { recursive: true });
  renameSync(join(builds.base, baseSource), join(builds.base, 'lib', 'redlock'));
}
cpSync(coreSourceDir(root), join(builds.now, 'lib', 'redlock'), { recursive: true });

interface Sample {
  pairsPerS: number;
  p50Ms: number;
  clientUsPerPair: number;
  redisUsPerPair: number;
  commandsPerPair: number;
}
const FIGURES: ReadonlyArray<keyof Sample> = ['pairsPerS', 'p50Ms', 'clientUsPerPair', 'redisUsPerPair', 'commandsPerPair'];
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;

const cluster = await BenchCluster.start(scratch);
try {
  for (const [fenced, concurrency] of modes.map((m) => MODES[m as keyof typeof MODES])) {
    const samples: Record<'base' | 'now', Sample[]> = { base: [], now: [] };
    for (let r = 0; r < runs; r++) {
      for (const which of r % 2 === 0 ? (['base', 'now'] as const) : (['now', 'base'] as const)) {
        await cluster.reset();
        const out = spawnSync(
          process.execPath,
          [
            '--import',
            'tsx',
            join(import.meta.dirname, 'worker.ts'),
            join(builds[which], 'lib', 'redlock', 'index.ts'),
            cluster.urls.join(','),
            String(fenced),
            String(concurrency),
            String(ms),
          ],
          { cwd: root, encoding: 'utf8' },
        );
        if (out.status !== 0) throw new Error(`worker failed: ${out.stderr}`);
        samples[which].push(JSON.parse(out.stdout.trim().split('\n').pop()!) as Sample);
      }
    }
    console.log(`\n${fenced ? 'fenced' : 'unfenced'}, c=${concurrency}, ${runs} runs each (base ${values.base}, now = working tree)`);
    console.log('| figure | base (median) | now (median) | now / base (median of paired runs) |\n|---|--:|--:|--:|');
    for (const f of FIGURES) {
      const ratios = samples.now.map((s, i) => s[f] / samples.base[i]![f]);
      console.log(
        `| ${f} | ${median(samples.base.map((s) => s[f])).toFixed(2)} | ${median(samples.now.map((s) => s[f])).toFixed(2)} | ${median(ratios).toFixed(3)} |`,
      );
    }
  }
} finally {
  await cluster.stop();
  rmSync(scratch, { recursive: true, force: true });
}
