import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { epochKey } from '@redlock-console/redlock';
import { ADOPT_RESTART_SCRIPT } from '../../src/scripts';
import { uniquePrefix } from '@/test/support/cluster';
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
});

const OLD = 'a'.repeat(40);
const adopt = (p: string, stopped: string, untilMs = '0') =>
  d.eval(ADOPT_RESTART_SCRIPT.source, 1, epochKey(p), stopped, 'supervisor', untilMs) as Promise<[number, string]>;
const info = async (section: string, field: string) => new RegExp(`${field}:([^\\r\\n]+)`).exec(await d.info(section))![1]!;

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
    const uptimeBefore = Number(await info('server', 'uptime_in_seconds'));
    const now = Number((await d.time())[0]) * 1000;
    expect(await adopt(p, OLD)).toEqual([1, runId]);
    const uptimeAfter = Number(await info('server', 'uptime_in_seconds'));
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
    const start = Number(e.serverStartedAt);
    expect(start).toBeGreaterThanOrEqual(now - Math.max(0, uptimeAfter - 1) * 1000 - 1_000);
    expect(start).toBeLessThanOrEqual(now + 1_000 - Math.max(0, uptimeBefore - 1) * 1000);
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
  });

  it('anything else is left to the quarantine: no sentinel, another stopped process, another cause', async () => {
    const runId = await info('server', 'run_id');
    expect(await adopt(uniquePrefix('adopt-none'), OLD)).toEqual([0, 'no-sentinel']);
    for (const [name, fields] of [
      ['other-stopped', { runId: 'c'.repeat(40) }],
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
