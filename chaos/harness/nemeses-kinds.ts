/**
 * What a nemesis is (chaos/harness/nemeses.ts): the names, the context a phase gives it, a fault and
 * the nemesis itself.
 */
import type { Redis } from 'ioredis';
import type { ClusterSupervisor } from '../../lib/cluster';
import type { NemesisAction } from './history';
import type { ClientLinks, SkewLinks } from './links';
import type { NodeClocks } from './node-clocks';
import type { Rng } from './random';
import type { TrialKind, TrialResult } from './targeted-kinds';
import type { ClientWorker } from './workers';
import type { ClientSettings, HoldMix } from './worker-protocol';

export const NEMESIS_NAMES = [
  'none',
  'blackhole-minority',
  'blackhole-majority',
  'ring-partition',
  'latency',
  'connection-reset',
  'skew',
  'pause-node',
  'crash-aof',
  'crash-none-quarantine',
  'pause-client',
  'restart-rdb',
  'restart-stale-aof',
  'evict-volatile-lru',
  'evict-allkeys-random',
  'short-max-ttl',
  'lose-data',
  'lose-majority',
  'late-extend',
  'fence-stall',
  'restart-rdb-late',
  'rollback-replicaof',
  'rollback-reload',
  'rollback-swapdb',
  'clock-jump',
] as const;
export type NemesisName = (typeof NEMESIS_NAMES)[number];

export type NetworkPath = 'direct' | 'node-proxies' | 'client-links' | 'skew';

export interface NemesisContext {
  supervisor: ClusterSupervisor;
  clients: readonly ClientWorker[];
  /** Indices of the clients that use fenced locks. */
  fencedClients: readonly number[];
  links: ClientLinks;
  skew: SkewLinks;
  rng: Rng;
  ttlMs: number;
  driftFactor: number;
  cycle: number;
  /** Direct admin connections to every redis-server (bypassing every proxy). */
  direct: readonly Redis[];
  /** The node a nemesis works on for its whole phase (chosen by its setup), if it has one. */
  victim: number | null;
  /** The masters' wall clocks (the clock nemesis). */
  clocks: NodeClocks;
  record(event: NemesisAction): void;
  /** Run one targeted trial (chaos/harness/targeted.ts) with the phase's core; its history joins the phase's. */
  trial(kind: TrialKind, options?: { victim?: number; variant?: string }): Promise<TrialResult>;
}

export interface Fault {
  label: string;
  /** How long the fault stays before it is healed, ms. */
  durationMs: number;
  heal(): Promise<void>;
}

export interface Nemesis {
  name: NemesisName;
  title: string;
  /**
   * Which way the clients reach the nodes in this phase: straight to the redis-server ports, through
   * the cluster's fault proxy of each node, through per-client fault proxies, or through the skew
   * proxies. Only the network faults need a fault proxy in the path (it costs CPU on this box).
   */
  network: NetworkPath;
  holds?: Partial<HoldMix>;
  /** Client settings of this nemesis's phase (e.g. faster retries), given the ttl. */
  settings?(ttlMs: number): Partial<ClientSettings>;
  reportHolds?: boolean;
  /** Fault cycles this nemesis needs at least, whatever the profile says. */
  minCycles?: number;
  /**
   * Each cycle is a targeted trial (chaos/harness/targeted.ts) that creates the danger on purpose; the
   * phase must show the safe core's defence in every one.
   */
  targeted?: TrialKind;
  /**
   * Every client reaches a quorum of nodes the whole time, with a node to spare or a bare one:
   * acquires must not fail for unavailability nor collapse in throughput (the liveness verdict,
   * chaos/harness/liveness.ts).
   */
  keepsQuorum?: 'spare' | 'bare';
  /** Nodes restart in this phase, so their command counts start over (the cost is a lower bound). */
  restartsNodes?: boolean;
  /**
   * How much longer than the lease the phase waits after its clients stop before it scans for
   * leaked keys, ms: a node clock stepped back lengthens the keys it holds by the step.
   */
  settleMs?: number;
  /** Before the first cycle / after the last heal (e.g. switch the nodes' persistence). */
  setup?(ctx: NemesisContext): Promise<void>;
  teardown?(ctx: NemesisContext): Promise<void>;
  /** Inject one fault (null: this nemesis does nothing). */
  fault(ctx: NemesisContext): Promise<Fault | null>;
  /** How long to stay healed after a fault, ms. */
  healMs(ctx: NemesisContext): number;
}

/** A random duration between `min` and `max` × the phase's ttl, ms. */
export const ttls = (ctx: NemesisContext, min: number, max: number) => Math.round(ctx.rng.between(min, max) * ctx.ttlMs);
