import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { epochKey, legacyFenceKey } from '@redlock-console/redlock';
import { anchorKey } from '../../src/keys';
import { MARK_CLEAN_SCRIPT } from '../../src/scripts';
import { uniquePrefix, waitFor } from '@/test/support/cluster';
import { scriptNode } from '@/test/support/script-node';

// mark-clean.lua run directly on one real redis-server: the clean sentinel it writes for the
// running process (every field a later check compares: probe.lua), the register floored at
// now × 1000 and never lowered (the old key kept in step), a recorded ceiling kept, and its
// compare-and-set on what the caller saw. Also the count of data-replacing commands
// (_replacing.lua) it records. Written for the Lua mutants of mark-clean.lua and _replacing.lua
// (scripts/mutation/lua-mutants.ts, docs/mutation.md).
let d: Redis;
scriptNode(async (client) => {
  d = client;
  // Calls of two data-replacing commands, so that their count is not 0: SWAPDB there and back,
  // and a RESTORE of a key of no prefix the tests use.
  await d.swapdb(0, 1);
  await d.swapdb(0, 1);
  await d.set('mark-clean-dump', 'x');
  const dump = await d.dumpBuffer('mark-clean-dump');
  await d.restore('mark-clean-dump', 0, dump!, 'REPLACE');
  // Evictions, so that evicted_keys is not 0 (a mark-clean that recorded '0' would pass otherwise):
  // volatile keys under memory pressure, then the policy put back and the fillers deleted.
  await d.config('SET', 'maxmemory-policy', 'volatile-lru');
  const used = Number(/used_memory:(\d+)/.exec(await d.info('memory'))![1]);
  await d.config('SET', 'maxmemory', String(used + 256 * 1024));
  for (let i = 0; i < 80 && Number(await info('stats', 'evicted_keys')) === 0; i++) {
    const fill = d.pipeline();
    for (let k = 0; k < 200; k++) fill.set(`filler:${i}:${k}`, 'x'.repeat(1_024), 'PX', 60_000);
    await fill.exec().catch(() => undefined);
  }
  await d.config('SET', 'maxmemory', '0');
  await d.config('SET', 'maxmemory-policy', 'noeviction');
  await d.eval("for _, k in ipairs(redis.call('KEYS', 'filler:*')) do redis.call('DEL', k) end", 0);
});

const markClean = (p: string, options: { maxTtl?: number; origin?: string; seenRunId?: string; seenCreatedAt?: string } = {}) =>
  d.eval(
    MARK_CLEAN_SCRIPT.source,
    3,
    epochKey(p),
    legacyFenceKey(p),
    anchorKey(p),
    String(options.maxTtl ?? 5_000),
    options.origin ?? 'clean',
    options.seenRunId ?? '',
    options.seenCreatedAt ?? '',
  ) as Promise<Array<number | string>>;

const info = async (section: string, field: string) => new RegExp(`${field}:([^\\r\\n]+)`).exec(await d.info(section))![1]!;
/**
 * mark-clean.lua run between two reads of the node's clock (TIME, in ms as the script computes it)
 * and uptime, in one MULTI so that nothing runs in between: the script's now is in [before, after],
 * most often the same ms, and its uptime in [uptimeBefore, uptimeAfter].
 */
async function markCleanTimed(p: string) {
  const r = (await d
    .multi()
    .info('server')
    .time()
    .eval(MARK_CLEAN_SCRIPT.source, 3, epochKey(p), legacyFenceKey(p), anchorKey(p), '5000', 'clean', '', '')
    .time()
    .info('server')
    .exec())!;
  const value = (i: number): unknown => {
    const [err, v] = r[i]!;
    if (err) throw err;
    return v;
  };
  const ms = (i: number) => {
    const [sec, us] = value(i) as [string, string];
    return Number(sec) * 1000 + Math.floor(Number(us) / 1000);
  };
  const up = (i: number) => Number(/uptime_in_seconds:(\d+)/.exec(value(i) as string)![1]);
  return { reply: value(2) as Array<number | string>, before: ms(1), after: ms(3), uptimeBefore: up(0), uptimeAfter: up(4) };
}
/**
 * Timed tries until the node's clock has gone through a whole second (and 30 at least): a slip of
 * 1 ms in the ms arithmetic shows only at some points of a second (e.g. `/ 999` from the 999th ms
 * on, when the call falls in the same ms as the TIME after it).
 */
async function overASecond(attempt: () => Promise<{ before: number; after: number }>): Promise<void> {
  let first: number | undefined;
  for (let i = 0, last = 0; i < 30 || last - first! < 1_100; i++) {
    const t = await attempt();
    first ??= t.before;
    last = t.after;
  }
}

async function replacingCount(): Promise<number> {
  const stats = await d.info('commandstats');
  let n = 0;
  for (const name of ['debug', 'swapdb', 'restore', 'restore-asking', 'flushall', 'replicaof', 'slaveof', 'failover'])
    n += Number(new RegExp(`cmdstat_${name}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
  return n;
}

describe('mark-clean.lua', () => {
  it('writes a clean sentinel for the running process, with the register floored at now × 1000 and an anchor', async () => {
    const p = uniquePrefix('mark-clean');
    const uptimeBefore = Number(await info('server', 'uptime_in_seconds'));
    const expectedReplacing = await replacingCount();
    const [ok, now, register, runId] = await markClean(p, { origin: 'fresh' });
    const uptimeAfter = Number(await info('server', 'uptime_in_seconds'));
    expect(ok).toBe(1);
    expect(runId).toBe(await info('server', 'run_id'));
    expect(Number(register)).toBeGreaterThanOrEqual(Number(now) * 1000);
    expect(Number(register)).toBeLessThan((Number(now) + 1) * 1000);
    const e = await d.hgetall(epochKey(p));
    expect(e).toMatchObject({
      createdAt: String(now),
      quarantineUntil: String(now),
      maxTtlMs: '5000',
      origin: 'fresh',
      cause: '',
      runId: String(runId),
      replid: await info('replication', 'master_replid'),
      evicted: await info('stats', 'evicted_keys'),
      fence: String(register),
      replacing: String(expectedReplacing),
    });
    expect(expectedReplacing).toBeGreaterThanOrEqual(3);
    expect(Number(e.processed)).toBeGreaterThan(0);
    expect(Number(e.processed)).toBeLessThanOrEqual(Number(await info('stats', 'total_commands_processed')));
    const start = Number(e.serverStartedAt);
    expect(start).toBeGreaterThanOrEqual(Number(now) - Math.max(0, uptimeAfter - 1) * 1000);
    expect(start).toBeLessThanOrEqual(Number(now) - Math.max(0, uptimeBefore - 1) * 1000);
    expect(await d.get(anchorKey(p))).toBe('1');
    expect(await d.exists(legacyFenceKey(p))).toBe(0);
  });

  it('records the node’s clock, its evicted keys and the process start to the ms (now − (uptime − 1) s)', async () => {
    // An uptime of 2 s or more, where the process start differs from now, and evictions.
    await waitFor(async () => Number(await info('server', 'uptime_in_seconds')) >= 2, 10_000, 'an uptime of 2 s');
    expect(Number(await info('stats', 'evicted_keys'))).toBeGreaterThan(0);
    await overASecond(async () => {
      const p = uniquePrefix('mark-clean-timed');
      const t = await markCleanTimed(p);
      const [ok, now, register] = t.reply;
      expect(ok).toBe(1);
      expect(Number(now)).toBeGreaterThanOrEqual(t.before);
      expect(Number(now)).toBeLessThanOrEqual(t.after);
      expect(Number(register)).toBe(Number(now) * 1000);
      const e = await d.hgetall(epochKey(p));
      expect(e.createdAt).toBe(String(now));
      expect(e.evicted).toBe(await info('stats', 'evicted_keys'));
      const start = Number(e.serverStartedAt);
      expect(start).toBeGreaterThanOrEqual(t.before - (t.uptimeAfter - 1) * 1000);
      expect(start).toBeLessThanOrEqual(t.after - (t.uptimeBefore - 1) * 1000);
      return t;
    });
  });

  it('keeps a register above the floor (the hash’s or the old key’s) and the old key in step; keeps a recorded ceiling', async () => {
    const p = uniquePrefix('mark-clean-high');
    const high = String(Date.now() * 1000 + 10_000_000_000);
    await d.hset(epochKey(p), 'createdAt', '1', 'fence', high, 'maxTtlMs', '9000');
    const [, , register] = await markClean(p, { maxTtl: 5_000 });
    expect(String(register)).toBe(high);
    expect(await d.hget(epochKey(p), 'fence')).toBe(high);
    expect(await d.hget(epochKey(p), 'maxTtlMs')).toBe('9000');
    const q = uniquePrefix('mark-clean-legacy');
    await d.set(legacyFenceKey(q), high);
    const [, , r2] = await markClean(q);
    expect(String(r2)).toBe(high);
    expect(await d.hget(epochKey(q), 'fence')).toBe(high);
    // The anchor is created beside an old key too (the check is on the anchor, not on the old key).
    expect(await d.get(anchorKey(q))).toBe('1');
    const s = uniquePrefix('mark-clean-legacy-low');
    await d.set(legacyFenceKey(s), '5');
    const [, now, r3] = await markClean(s);
    expect(Number(r3)).toBeGreaterThanOrEqual(Number(now) * 1000);
    expect(await d.get(legacyFenceKey(s))).toBe(String(r3));
  });

  it('the compare-and-set: writes only while the sentinel (and the running process) is the one the caller saw', async () => {
    const runId = await info('server', 'run_id');
    // '-': the caller saw no sentinel.
    const p = uniquePrefix('mark-clean-cas');
    expect((await markClean(p, { seenRunId: '-' }))[0]).toBe(1);
    const createdAt = (await d.hget(epochKey(p), 'createdAt'))!;
    expect(await markClean(p, { seenRunId: '-' })).toEqual([0, createdAt, runId]);
    // The sentinel and the process the caller saw, and its createdAt.
    expect((await markClean(p, { seenRunId: runId, seenCreatedAt: createdAt }))[0]).toBe(1);
    const createdAt2 = (await d.hget(epochKey(p), 'createdAt'))!;
    expect((await markClean(p, { seenRunId: runId, seenCreatedAt: '1' }))[0]).toBe(0);
    expect(await d.hget(epochKey(p), 'createdAt')).toBe(createdAt2);
    // A sentinel naming another process, seen as such: this process is not the one the caller saw.
    const other = 'f'.repeat(40);
    await d.hset(epochKey(p), 'runId', other);
    expect(await markClean(p, { seenRunId: other })).toEqual([0, createdAt2, other]);
    expect(await markClean(p, { seenRunId: runId })).toEqual([0, createdAt2, other]);
    // The running process's sentinel, its createdAt not given: the runId alone is compared.
    const r = uniquePrefix('mark-clean-cas-run-only');
    await d.hset(epochKey(r), 'createdAt', '5', 'runId', runId);
    expect((await markClean(r, { seenRunId: runId }))[0]).toBe(1);
    expect(await d.hget(epochKey(r), 'createdAt')).not.toBe('5');
    // No sentinel, but the caller saw one.
    const q = uniquePrefix('mark-clean-cas-gone');
    expect(await markClean(q, { seenRunId: runId })).toEqual([0, '', '']);
    expect(await d.exists(epochKey(q))).toBe(0);
    // A sentinel without a runId (written by hand) is seen as ''.
    const s = uniquePrefix('mark-clean-cas-norun');
    await d.hset(epochKey(s), 'createdAt', '5');
    expect((await markClean(s, { seenRunId: '-' }))[0]).toBe(0);
  });
});
