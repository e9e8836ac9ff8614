import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { epochKey } from '@redlock-console/redlock';
import { ADOPT_RESTART_SCRIPT } from '../../src/scripts';
import { uniquePrefix, waitFor } from '@/test/support/cluster';
import { scriptNode } from '@/test/support/script-node';

// adopt-restart.lua run directly on one real redis-server, the "old process" a made-up run_id in
// the sentinel: the sentinel of the process a supervisor stopped gracefully moves to the running
// one; a restart quarantine a client already started for exactly that restart is lifted back to
// the old process's quarantine; anything else is left alone. (Its only other test is the
// console's cluster-continuity test, outside the lock core's.) Written for adopt-restart.lua's Lua
// mutants (scripts/mutation/lua-mutants.ts, docs/mutation.md).
let d: Redis;
scriptNode(async (client) => {
  d = client;
  await d.swapdb(0, 1); // a data-replacing call, so that its count is not 0
  // Evictions, so that evicted_keys is not 0 (an adoption that recorded '0' would pass otherwise):
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

const OLD = 'a'.repeat(40);
const adopt = (p: string, stopped: string, untilMs = '0') =>
  d.eval(ADOPT_RESTART_SCRIPT.source, 1, epochKey(p), stopped, 'supervisor', untilMs) as Promise<[number, string]>;
const info = async (section: string, field: string) => new RegExp(`${field}:([^\\r\\n]+)`).exec(await d.info(section))![1]!;
const uptime = async () => Number(await info('server', 'uptime_in_seconds'));

/**
 * The script run between two reads of the node's clock (TIME, in ms as the script computes it) and
 * uptime, in one MULTI so that nothing runs in between: the script's now is in [before, after],
 * most often the same ms, and its uptime in [uptimeBefore, uptimeAfter].
 */
async function adoptTimed(p: string, stopped: string, untilMs = '0') {
  const r = (await d
    .multi()
    .info('server')
    .time()
    .eval(ADOPT_RESTART_SCRIPT.source, 1, epochKey(p), stopped, 'supervisor', untilMs)
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
  return { reply: value(2) as [number, string], before: ms(1), after: ms(3), uptimeBefore: up(0), uptimeAfter: up(4) };
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

describe('adopt-restart.lua', () => {
  it('the sentinel of the stopped process moves to the running one, with this process’s counters', async () => {
    const p = uniquePrefix('adopt');
    await d.hset(
      epochKey(p),
      'createdAt',
      '123',
      'quarantineUntil',
      '456',
      'runId',
      OLD,
      'evicted',
      '77',
      'processed',
      '999999999',
      'replacing',
      '55',
      'replid',
      'b'.repeat(40),
    );
    const runId = await info('server', 'run_id');
    // An uptime of 2 s or more, where the process start (now − (uptime − 1) s) differs from now.
    await waitFor(async () => (await uptime()) >= 2, 10_000, 'an uptime of 2 s');
    expect(Number(await info('stats', 'evicted_keys'))).toBeGreaterThan(0);
    expect((await adoptTimed(p, OLD)).reply).toEqual([1, runId]);
    const e = await d.hgetall(epochKey(p));
    expect(e).toMatchObject({
      createdAt: '123',
      quarantineUntil: '456',
      runId,
      prevRunId: OLD,
      origin: 'supervisor',
      evicted: await info('stats', 'evicted_keys'),
      replid: await info('replication', 'master_replid'),
      replacing: '1',
    });
    expect(Number(e.processed)).toBeLessThan(999999999);
    expect(Number(e.processed)).toBeGreaterThan(0);
    // The process start, now − (uptime − 1) s, to the ms.
    await overASecond(async () => {
      const q = uniquePrefix('adopt-start');
      await d.hset(epochKey(q), 'createdAt', '123', 'runId', OLD);
      const t = await adoptTimed(q, OLD);
      expect(t.reply).toEqual([1, runId]);
      const start = Number(await d.hget(epochKey(q), 'serverStartedAt'));
      expect(start).toBeGreaterThanOrEqual(t.before - (t.uptimeAfter - 1) * 1000);
      expect(start).toBeLessThanOrEqual(t.after - (t.uptimeBefore - 1) * 1000);
      return t;
    });
  });

  it('a restart quarantine a client started for exactly this restart: lifted to the old process’s quarantine, no reseed owed', async () => {
    const runId = await info('server', 'run_id');
    const p = uniquePrefix('adopt-quarantined');
    await d.hset(
      epochKey(p),
      'createdAt',
      '123',
      'quarantineUntil',
      '9999999999999',
      'runId',
      runId,
      'prevRunId',
      OLD,
      'cause',
      'restart',
      'reseed',
      '1',
    );
    const until = String(Date.now() + 60_000);
    const [ok] = await adopt(p, OLD, until);
    expect(ok).toBe(1);
    const e = await d.hgetall(epochKey(p));
    expect(e.quarantineUntil).toBe(until);
    expect(e.cause).toBe('');
    expect(e.origin).toBe('supervisor');
    expect(e.reseed).toBeUndefined();
    expect(Number(e.createdAt)).toBeGreaterThan(123);
    expect(e.replacing).toBe('1');
    // An old quarantine already over: the node is clean from now (never a quarantine in the past).
    const q = uniquePrefix('adopt-quarantined-over');
    await d.hset(epochKey(q), 'createdAt', '123', 'quarantineUntil', '9999999999999', 'runId', runId, 'prevRunId', OLD, 'cause', 'restart');
    await adopt(q, OLD, '0');
    const eq = await d.hgetall(epochKey(q));
    expect(eq.quarantineUntil).toBe(eq.createdAt);
    expect(Math.abs(Number(eq.createdAt) - Date.now())).toBeLessThan(60_000);
    // createdAt is the node's clock at the call, to the ms.
    await overASecond(async () => {
      const r = uniquePrefix('adopt-quarantined-now');
      await d.hset(epochKey(r), 'createdAt', '123', 'runId', runId, 'prevRunId', OLD, 'cause', 'restart');
      const t = await adoptTimed(r, OLD);
      expect(t.reply).toEqual([1, runId]);
      const createdAt = Number(await d.hget(epochKey(r), 'createdAt'));
      expect(createdAt).toBeGreaterThanOrEqual(t.before);
      expect(createdAt).toBeLessThanOrEqual(t.after);
      return t;
    });
  });

  it('anything else is left to the quarantine: no sentinel, another stopped process, another cause', async () => {
    const runId = await info('server', 'run_id');
    expect(await adopt(uniquePrefix('adopt-none'), OLD)).toEqual([0, 'no-sentinel']);
    for (const [name, fields] of [
      ['other-stopped', { runId: 'c'.repeat(40) }],
      ['no-run-id', {}],
      ['other-cause', { runId, prevRunId: OLD, cause: 'data-loss' }],
      ['other-prev', { runId, prevRunId: 'c'.repeat(40), cause: 'restart' }],
      ['not-running', { runId: 'c'.repeat(40), prevRunId: OLD, cause: 'restart' }],
    ] as const) {
      const p = uniquePrefix(`adopt-${name}`);
      await d.hset(epochKey(p), { createdAt: '123', quarantineUntil: '456', ...fields });
      const before = await d.hgetall(epochKey(p));
      expect(await adopt(p, OLD, '789'), name).toEqual([0, 'changed']);
      expect(await d.hgetall(epochKey(p)), name).toEqual(before);
    }
  });
});
