/**
 * What the targeted nemeses do to one node besides crashing it: switch its persistence with a clean
 * data directory, take it under memory pressure with an evicting policy, and read what it did.
 * Every call goes to the redis-server process directly (the run's admin connections).
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import type { ClusterSupervisor, Persistence } from '../../lib/cluster';

/** The evicting policies the eviction nemeses use (a volatile-* one and an allkeys-* one). */
export type EvictionPolicy = 'volatile-lru' | 'allkeys-random';

/**
 * Stop node `node` (0-based) gracefully, delete its RDB snapshot and AOF directory, and start it with
 * `mode`: a node that starts in a mode with an empty data directory, so that no file of an earlier
 * phase (a snapshot the graceful stop of an `rdb` node wrote, an AOF) comes back later unasked.
 */
export async function restartClean(supervisor: ClusterSupervisor, node: number, mode: Persistence): Promise<void> {
  const id = node + 1;
  await supervisor.stop(id);
  const dir = supervisor.node(id).dataDir;
  rmSync(join(dir, 'dump.rdb'), { force: true });
  rmSync(join(dir, 'aof'), { recursive: true, force: true });
  await supervisor.start(id, mode);
}

export async function restartAllClean(supervisor: ClusterSupervisor, mode: Persistence): Promise<void> {
  for (let n = 0; n < supervisor.size; n++) await restartClean(supervisor, n, mode);
}

function infoField(info: string, field: string): number {
  const m = new RegExp(`^${field}:(\\d+)`, 'm').exec(info);
  return m ? Number(m[1]) : 0;
}

export async function evictedKeys(client: Redis): Promise<number> {
  return infoField(await client.info('stats'), 'evicted_keys');
}

export async function evictionPolicy(client: Redis): Promise<string> {
  const reply = (await client.config('GET', 'maxmemory-policy')) as string[];
  return reply[1] ?? 'unknown';
}

export interface PressureOutcome {
  /** Keys the node evicted while under pressure. */
  evicted: number;
  /** Filler keys written. */
  written: number;
  /** `done()` said so before the filler budget ran out. */
  done: boolean;
}

const FILLER_BYTES = 4_096;
const FILLERS_PER_BATCH = 16;
const HEADROOM_BYTES = 512 * 1024;

/**
 * Memory pressure: maxmemory just above what the node uses, then filler keys (with a TTL, so that
 * a volatile-* policy may take them too) until `done()` says so or `maxFillers` are written; then
 * maxmemory back to 0 (no limit: nothing more is evicted). Eviction happens only under the node's
 * policy: with noeviction the writes fail with OOM instead, which is ignored here.
 */
export async function memoryPressure(
  client: Redis,
  fillerPrefix: string,
  done: () => Promise<boolean>,
  maxFillers = 4_000,
): Promise<PressureOutcome> {
  const before = await evictedKeys(client);
  const used = infoField(await client.info('memory'), 'used_memory');
  await client.config('SET', 'maxmemory', String(used + HEADROOM_BYTES));
  const value = 'x'.repeat(FILLER_BYTES);
  let written = 0;
  let finished = false;
  try {
    while (written < maxFillers) {
      const pipeline = client.pipeline();
      for (let i = 0; i < FILLERS_PER_BATCH; i++) pipeline.set(`${fillerPrefix}${written++}`, value, 'PX', 60_000);
      await pipeline.exec().catch(() => undefined);
      if (await done()) {
        finished = true;
        break;
      }
    }
  } finally {
    await client.config('SET', 'maxmemory', '0');
  }
  return { evicted: (await evictedKeys(client)) - before, written, done: finished };
}

const STEP_BYTES = 256;
const STEP_START_BYTES = 32 * 1024;

/**
 * Eviction a few keys at a time: maxmemory lowered by 256 bytes per step from a little above what
 * the node uses (CONFIG SET maxmemory evicts at once, down to the new limit) until `done()` says so
 * or `maxSteps` steps were taken; then back to 0. A step frees about one small key, so `done()` sees
 * the first key it watches go: bulk pressure, or a limit computed from INFO (which misses the
 * node's own buffers by kilobytes), evicts dozens of keys between two looks.
 */
export async function evictUntil(client: Redis, done: () => Promise<boolean>, maxSteps = 3_000, maxMs = 1_500): Promise<PressureOutcome> {
  const before = await evictedKeys(client);
  let limit = infoField(await client.info('memory'), 'used_memory') + STEP_START_BYTES;
  const deadline = performance.now() + maxMs;
  let finished = false;
  try {
    for (let step = 0; step < maxSteps && limit > STEP_BYTES && performance.now() < deadline; step++) {
      limit -= STEP_BYTES;
      await client.config('SET', 'maxmemory', String(limit));
      if (await done()) {
        finished = true;
        break;
      }
    }
  } finally {
    await client.config('SET', 'maxmemory', '0');
  }
  return { evicted: (await evictedKeys(client)) - before, written: 0, done: finished };
}

/** Delete the filler keys that were not evicted. */
export async function removeFillers(client: Redis, fillerPrefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${fillerPrefix}*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length) await client.unlink(...keys);
  } while (cursor !== '0');
}
