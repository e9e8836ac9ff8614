import type { HoldMix, SlotObjects } from './worker-protocol';

/** Sizes and timings of a chaos run. */
export interface ChaosProfile {
  name: 'ci' | 'long';
  /** Lease of every lock in the phases (ms); maxTtlMs of their clients. */
  ttlMs: number;
  /** The chaos clients' driftFactor: the bound on node clock drift the skew nemesis stays within. */
  driftFactor: number;
  /** The clients' per-round node timeout (the latency nemesis raises it to the ttl). */
  nodeTimeoutMs: number;
  /** Successful acquisitions each nemesis runs for (fault and healed periods together). */
  targetPerNemesis: number;
  /** A phase ends after this long even short of its target (reported as a shortfall). */
  maxPhaseMs: number;
  /** Fault cycles each nemesis runs at least. */
  minCycles: number;
  clients: number;
  /** The first `fencedClients` clients lock `f:` resources with fences; the rest `u:` ones without. */
  fencedClients: number;
  /** Hot loops (short holds) and long loops (long, extended and abandoned holds) per client. */
  loopsPerClient: number;
  longLoopsPerClient: number;
  /**
   * Semaphore / read-write lock loops per client (chaos/workers/slot-loop.ts), beside the lock loops
   * in every phase, and the objects they share: every client takes every one of them.
   */
  slotLoopsPerClient: number;
  slotObjects: SlotObjects;
  /** Hot resources of the fenced / unfenced clients; each kind also has one resource for the long loops. */
  fencedResources: number;
  unfencedResources: number;
  retryCount: number;
  retryDelayMs: number;
  retryJitterMs: number;
  holds: HoldMix;
  /** Seeds of the quarantine-off restart control (the overlap must be found in ≥ 90 % of them). */
  controlSeeds: number;
  /** Lease of the scripted control scenarios, ms. */
  controlTtlMs: number;
  /**
   * Lease and maxTtlMs of the targeted trials (chaos/harness/targeted.ts), ms: long enough that a
   * victim's restart and the clients' reconnections fit inside A's validity on a loaded box (the
   * trials wait for it only when something goes wrong).
   */
  trialTtlMs: number;
  /** Budget of one mutant attempt (one nemesis), ms. */
  mutantPhaseMs: number;
}

const BASE = {
  ttlMs: 400,
  driftFactor: 0.2,
  nodeTimeoutMs: 100,
  clients: 5,
  fencedClients: 3,
  loopsPerClient: 2,
  longLoopsPerClient: 1,
  slotLoopsPerClient: 1,
  slotObjects: {
    semaphores: [
      { name: 's2', limit: 2 },
      { name: 's3', limit: 3 },
    ],
    rwlocks: [{ name: 'w3', maxReaders: 3 }],
  },
  fencedResources: 8,
  unfencedResources: 6,
  retryCount: 40,
  retryDelayMs: 30,
  retryJitterMs: 20,
  holds: { shortMaxMs: 3, extendShare: 0.2, longTtls: 2.5, abandonShare: 0.2, hotAbandonShare: 0, lateExtendShare: 0 },
  controlTtlMs: 3_000,
  trialTtlMs: 5_000,
} as const;

export const PROFILES: Readonly<Record<ChaosProfile['name'], ChaosProfile>> = {
  ci: {
    ...BASE,
    holds: { ...BASE.holds },
    name: 'ci',
    targetPerNemesis: 2_000,
    maxPhaseMs: 40_000,
    minCycles: 6,
    controlSeeds: 10,
    mutantPhaseMs: 8_000,
  },
  long: {
    ...BASE,
    holds: { ...BASE.holds },
    name: 'long',
    targetPerNemesis: 50_000,
    maxPhaseMs: 900_000,
    minCycles: 30,
    controlSeeds: 20,
    mutantPhaseMs: 30_000,
  },
};

export function isProfileName(value: string): value is ChaosProfile['name'] {
  return value === 'ci' || value === 'long';
}
