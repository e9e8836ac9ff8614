import type { BenchCluster } from './cluster';
import type { WorkloadResult } from './report';

export interface BenchOptions {
  /** Fewer and shorter runs, for development. */
  quick: boolean;
  /** Measured runs per figure (after a warm-up). */
  runs: number;
}

export interface BenchContext {
  cluster: BenchCluster;
  options: BenchOptions;
  log(line: string): void;
}

export interface Workload {
  id: string;
  run(ctx: BenchContext): Promise<WorkloadResult>;
}

/** `quick` or `full`, by the options. */
export function pick<T>(options: BenchOptions, quick: T, full: T): T {
  return options.quick ? quick : full;
}
