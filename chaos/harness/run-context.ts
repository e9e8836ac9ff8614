import { readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';
import type { ClusterSupervisor } from '../../lib/cluster';
import {
  lockKeyPrefix,
  lockPattern,
  markNodeClean,
  rwKeyPrefix,
  rwPattern,
  semaphoreKeyPrefix,
  semaphorePattern,
} from '@redlock-console/redlock';
import { parseJsonLines } from './event-log';
import type { LeakedKey, LiveKey, NemesisAction, NemesisEvent } from './history';
import { nowNs } from './history';
import type { ClientLinks, SkewLinks } from './links';
import type { NodeClocks } from './node-clocks';
import type { ChaosProfile } from './profiles';
import { parseCommandStats } from './stats';
import type { ClientSettings } from './worker-protocol';
import type { ChaosWorkers } from './workers';

/** A build of the lock core the clients import: the real one or a mutant. */
export interface CoreBuild {
  /** 'real', or the mutant's name. */
  name: string;
  /** Absolute path of its index.ts. */
  indexPath: string;
}

/** Everything a phase or a control scenario needs from the run. */
export interface RunContext {
  root: string;
  origin: bigint;
  runId: string;
  /** Scratch directory of this run (event logs). */
  workDir: string;
  profile: ChaosProfile;
  supervisor: ClusterSupervisor;
  /** Direct admin connections to every redis-server (bypassing every proxy). */
  direct: Redis[];
  workers: ChaosWorkers;
  links: ClientLinks;
  skew: SkewLinks;
  /** The masters' wall clocks (the clock nemesis: node-clocks.ts). */
  clocks: NodeClocks;
  log(line: string): void;
}

export function now(run: RunContext): number {
  return nowNs(run.origin);
}

export function recorder(run: RunContext, into: NemesisEvent[]): (event: NemesisAction) => void {
  return (event) => into.push({ ...event, t: now(run) } as NemesisEvent);
}

export function clientSettings(run: RunContext, keyPrefix: string, overrides: Partial<ClientSettings> = {}): ClientSettings {
  const p = run.profile;
  return {
    keyPrefix,
    maxTtlMs: p.ttlMs,
    driftFactor: p.driftFactor,
    nodeTimeoutMs: p.nodeTimeoutMs,
    retryCount: p.retryCount,
    retryDelayMs: p.retryDelayMs,
    retryJitterMs: p.retryJitterMs,
    quarantine: true,
    nodeChecks: true,
    ...overrides,
  };
}

/** Write the clean epoch sentinel of a fresh key prefix on every node (a never-marked prefix starts quarantined). */
export async function markPrefixClean(run: RunContext, keyPrefix: string, maxTtlMs: number): Promise<void> {
  await Promise.all(run.direct.map((c) => markNodeClean(c, { keyPrefix, maxTtlMs, origin: 'chaos harness: fresh prefix' })));
}

export async function resetCommandStats(run: RunContext): Promise<void> {
  await Promise.all(run.direct.map((c) => c.config('RESETSTAT')));
}

export async function readCommandStats(run: RunContext): Promise<Record<string, number>[]> {
  return Promise.all(run.direct.map(async (c) => parseCommandStats(await c.info('commandstats'))));
}

/** The keys a scan reads: the mutex's lock keys, or the semaphores' slots and the read-write locks' keys. */
export type KeySpace = 'locks' | 'slots';

const PATTERNS: Record<KeySpace, (keyPrefix: string) => string[]> = {
  locks: (p) => [lockPattern(p)],
  slots: (p) => [semaphorePattern(p), rwPattern(p)],
};
const HEADS: Record<KeySpace, (keyPrefix: string) => string[]> = {
  locks: (p) => [lockKeyPrefix(p)],
  slots: (p) => [semaphoreKeyPrefix(p), rwKeyPrefix(p)],
};

/** Every key of `space` of these prefixes on every node, with its value (a key gone between the scan and the read is skipped). */
export async function scanLiveKeys(run: RunContext, keyPrefixes: readonly string[], space: KeySpace = 'locks'): Promise<LiveKey[]> {
  const live: LiveKey[] = [];
  await Promise.all(
    run.direct.flatMap((c, node) =>
      keyPrefixes.flatMap(PATTERNS[space]).map(async (pattern) => {
        let cursor = '0';
        do {
          const [next, keys] = await c.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
          cursor = next;
          const values = keys.length ? await c.mget(keys) : [];
          keys.forEach((key, i) => {
            const value = values[i];
            if (typeof value === 'string') live.push({ node, key, value });
          });
        } while (cursor !== '0');
      }),
    ),
  );
  return live;
}

/** Keys of `space` of `keyPrefix` still alive on any node (the epoch and fence keys have no TTL by design). */
export async function scanLeakedKeys(run: RunContext, keyPrefix: string, space: KeySpace = 'locks'): Promise<LeakedKey[]> {
  const leaked: LeakedKey[] = [];
  const heads = HEADS[space](keyPrefix);
  await Promise.all(
    run.direct.map(async (c, node) => {
      let cursor = '0';
      do {
        const [next, keys] = await c.scan(cursor, 'MATCH', `${keyPrefix}*`, 'COUNT', 1000);
        cursor = next;
        for (const key of keys) {
          if (!heads.some((head) => key.startsWith(head))) continue;
          const pttlMs = await c.pttl(key);
          if (pttlMs !== -2) leaked.push({ node, key, pttlMs });
        }
      } while (cursor !== '0');
    }),
  );
  return leaked;
}

export function readJsonLines<T>(path: string): T[] {
  try {
    return parseJsonLines<T>(readFileSync(path, 'utf8'));
  } catch {
    return [];
  }
}
