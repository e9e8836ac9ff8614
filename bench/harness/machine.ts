import { availableParallelism, cpus, loadavg, release, totalmem, type as osType } from 'node:os';

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
  };
}

export function currentLoad(): number[] {
  return loadavg().map((l) => Math.round(l * 100) / 100);
}
