import type { Lock } from '@redlock-console/redlock';
import type { ScenarioClient } from './clients';
import type { ScenarioCluster } from './cluster';
import type { RunRecord } from './record';

/** What a step needs from the run that executes it. */
export interface StepContext {
  /** ms since the run started. */
  now(): number;
  signal: AbortSignal;
  record: RunRecord;
  cluster: ScenarioCluster;
  client(name: string): ScenarioClient;
  readonly clients: ReadonlyMap<string, ScenarioClient>;
  prefix: string;
  maxTtlMs: number;
  lockKey(resource: string): string;
  /** The number of permits of a semaphore resource of the run; undefined for a lock. */
  limitOf(resource: string): number | undefined;
  /** Sleep `ms` of real time (abortable). */
  sleep(ms: number): Promise<void>;
  /** Sleep `ms` scaled by the run's speed (a scripted wait for the viewer, never a lease). */
  sleepScaled(ms: number): Promise<void>;
  /** Acquires running in the background, by client. */
  background: Map<string, Promise<unknown>>;
  /** The lock each client believes it holds, by `client\0resource`. */
  locks: Map<string, Lock>;
  /** Times of marked steps (e.g. the crash a probe measures from), by step id. */
  marks: Map<string, number>;
  /** Writes sent and held by the network (simulated), by the id of the step that sent them. */
  inFlight: Map<string, { client: string; resource: string; fence: number | null; value: string; sentAt: number }>;
  /** Record what really happened for a prediction. */
  reveal(predictionId: string, actual: string, explanation: string | undefined): void;
  /** Refresh the node lanes from the supervisor now. */
  refreshStates(): Promise<void>;
  /** Read every node's keys now (the sampler reads them every ~120 ms otherwise). */
  sampleNow(): Promise<void>;
  /** Tell the console about a node action (live events). */
  nodeAction(node: number, label: string): void;
  /** The largest added latency this run set on any proxy (restore waits for delayed packets). */
  noteLatency(ms: number): void;
}

export const lockId = (client: string, resource: string): string => `${client}\u0000${resource}`;
