/**
 * Messages between the chaos runner and its worker processes (Node IPC, JSON). Client processes
 * run lock loops or answer scripted steps; the register process keeps the fenced register.
 */
import type { Ns, SlotKind } from './history';

/** Lock-core settings a client process uses (a subset of RedlockSettings). */
export interface ClientSettings {
  keyPrefix: string;
  maxTtlMs: number;
  driftFactor: number;
  nodeTimeoutMs: number;
  retryCount: number;
  retryDelayMs: number;
  retryJitterMs: number;
  quarantine: boolean;
  /**
   * The core's restart, eviction and ceiling checks (RedlockSettings.nodeChecks): false only in
   * the negative controls, which show what the checks prevent.
   */
  nodeChecks: boolean;
  /**
   * Fences proposed with the grant (RedlockSettings.fenceAhead; the core's default, true, when
   * absent): false in the controls that show a register going back, which a fence proposed from
   * the workers' one clock would stand above by the clock's luck.
   */
  fenceAhead?: boolean;
}

/**
 * How the loops hold the locks they get. Hot loops only make short holds; long loops (on a
 * resource set of their own, so they do not starve the hot ones) make long and abandoned holds
 * with these probabilities, short ones otherwise.
 */
export interface HoldMix {
  /** Short holds last uniform(0, shortMaxMs). */
  shortMaxMs: number;
  /** Holds of `longTtls` × ttl, extended each time validity falls under half the ttl. */
  extendShare: number;
  longTtls: number;
  /** Holds kept until the validity ends, then walked away from without a release. */
  abandonShare: number;
  /** Share of the hot loops' holds that are abandoned too (0 but in the skew phase). */
  hotAbandonShare: number;
  /** Long-loop holds that make one extend right around the end of their validity (late-extend phase). */
  lateExtendShare: number;
}

/** The semaphores and read-write locks the slot loops share (chaos/workers/slot-loop.ts). */
export interface SlotObjects {
  /** Semaphores: `limit` permits each (≥ 2), taken 1 or 2 at a time. */
  semaphores: ReadonlyArray<{ name: string; limit: number }>;
  /** Read-write locks: at most `maxReaders` readers, or one writer. */
  rwlocks: ReadonlyArray<{ name: string; maxReaders: number }>;
}

export interface LoopConfig {
  phase: string;
  /** Absolute path of the lock core's index.ts (the real one or a mutant build). */
  corePath: string;
  /** One URL per node, in node order (proxies of this client). */
  urls: string[];
  settings: ClientSettings;
  ttlMs: number;
  fenced: boolean;
  /** Resources of the hot loops / of the long loops. */
  resources: string[];
  longResources: string[];
  loops: number;
  longLoops: number;
  /** Semaphore / read-write lock loops (0: none) and what they lock. */
  slotLoops: number;
  slotObjects: SlotObjects;
  seed: number;
  holds: HoldMix;
  /** The loops stop by themselves after this long, even if no stop message comes. */
  maxMs: number;
  /** Tell the runner when a hold starts and ends (the client-pause nemesis needs it). */
  reportHolds: boolean;
  /** JSONL file for the events. */
  logPath: string;
  registerPort: number;
}

/** One scripted step of a control scenario. */
export type RpcOp =
  /** `tag` names the session's locks (`<tag>.<client>.<n>`): unique in a phase, whose history may hold several sessions. */
  | { op: 'open'; corePath: string; urls: string[]; settings: ClientSettings; registerPort: number; logPath: string; tag: string }
  | { op: 'acquire'; resource: string; ttlMs: number; fenced: boolean; retryCount: number }
  /** A semaphore permit (`permits` slots) or a read / write lock, held under the key `<kind>:<name>` for write and release. */
  | {
      op: 'acquire-slots';
      kind: SlotKind;
      name: string;
      limit: number;
      permits: number;
      ttlMs: number;
      fenced: boolean;
      retryCount: number;
    }
  | { op: 'write'; resource: string }
  | { op: 'release'; resource: string }
  | { op: 'close' };

export type RunnerToClient =
  | { type: 'loop'; config: LoopConfig }
  | { type: 'stop' }
  /** Stop this process with SIGSTOP right after its next acquire has sent its commands. */
  | { type: 'arm-self-stop'; ms: number }
  | ({ type: 'rpc'; id: number } & RpcOp);

export type ClientToRunner =
  | { type: 'ready' }
  | { type: 'progress'; ok: number; failed: number }
  | { type: 'hold'; lock: string; resource: string; until: Ns }
  | { type: 'unhold'; lock: string }
  /** About to SIGSTOP itself: the runner sends SIGCONT after `ms`. */
  | { type: 'self-stop'; ms: number }
  | { type: 'loop-done'; ok: number; failed: number; events: number }
  | { type: 'rpc-result'; id: number; ok: true; value: unknown }
  | { type: 'rpc-result'; id: number; ok: false; error: string; message: string }
  | { type: 'fatal'; message: string }
  /** An unhandled promise rejection in the client process (counted and reported, not fatal). */
  | { type: 'unhandled'; message: string };

export type RunnerToRegister = { type: 'reset' } | { type: 'dump'; path: string };
export type RegisterToRunner = { type: 'ready'; port: number } | { type: 'dumped'; count: number };
