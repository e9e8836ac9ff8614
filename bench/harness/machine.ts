import { execFileSync } from 'node:child_process';
import { availableParallelism, cpus, loadavg, release, totalmem, type as osType } from 'node:os';
import { fileURLToPath } from 'node:url';

/** What the numbers were measured on (the machine is shared: the load average matters). */
export interface MachineInfo {
  cores: number;
  cpuModel: string;
  os: string;
  memoryGb: number;
  node: string;
  ioredis: string;
  redis: string;
  /** 1, 5 and 15 minute load averages when the run started and when it ended. */
  loadAtStart: number[];
  loadAtEnd: number[] | null;
  /** The code measured: the commit, and whether the checkout differed from it (see gitCommit). */
  commit?: string | null;
}

export function machineInfo(redisVersion: string, ioredisVersion: string): MachineInfo {
  return {
    cores: availableParallelism(),
    cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
    os: `${osType()} ${release()}`,
    memoryGb: Math.round(totalmem() / 1e9),
    node: process.version,
    ioredis: ioredisVersion,
    redis: redisVersion,
    loadAtStart: currentLoad(),
    loadAtEnd: null,
    commit: gitCommit(),
  };
}

/**
 * The commit checked out, with ` + uncommitted changes` when tracked files other than the bench's
 * own outputs differ from it (null outside a git checkout).
 */
function gitCommit(): string | null {
  const cwd = fileURLToPath(new URL('.', import.meta.url));
  const git = (...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  try {
    const head = git('rev-parse', '--short', 'HEAD');
    const changed = git(
      'status',
      '--porcelain',
      '--untracked-files=no',
      '--',
      ':(top)',
      ':(top,exclude)bench/results.json',
      ':(top,exclude)docs/benchmarks.md',
    );
    return changed === '' ? head : `${head} + uncommitted changes`;
  } catch {
    return null;
  }
}

export function currentLoad(): number[] {
  return loadavg().map((l) => Math.round(l * 100) / 100);
}
