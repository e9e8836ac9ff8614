import { describe, expect, it } from 'vitest';
import { epochKey, legacyFenceKey, markNodeClean, readFenceRegister, Redlock } from '@redlock-console/redlock';
import { anchorKey } from '../../src/keys';
import { uniquePrefix, waitFor } from '@/test/support/cluster';
import { redlockEnv } from '@/test/support/redlock-env';
import { probeNowMs, runProbe } from '../support/probe';

// Survivors of the Lua mutants of probe.lua (scripts/mutation/lua-mutants.ts, docs/mutation.md),
// killed here on real redis-server: what a check (a client's first contact with a node) does
// with the node's fence register and its sentinel.
const env = redlockEnv();
const MAX_TTL = 2_000;

async function cleanPrefix(name: string): Promise<string> {
  const prefix = uniquePrefix(name);
  for (const d of env.direct) await markNodeClean(d, { keyPrefix: prefix, maxTtlMs: MAX_TTL });
  return prefix;
}

function client(prefix: string): Redlock {
  const r = new Redlock(env.cluster.urls, { keyPrefix: prefix, maxTtlMs: MAX_TTL, retryCount: 0, nodeTimeoutMs: 2_000 });
  env.redlocks.push(r);
  return r;
}

describe('probe.lua: the register a check reads and keeps', () => {
  it('an old-layout fence key below the hash register never lowers it: the next fence is above the hash register', async () => {
    const prefix = await cleanPrefix('probe-legacy-lower');
    const high = (await readFenceRegister(env.direct[0]!, prefix)) + 1_000_000;
    for (const d of env.direct) {
      await d.hset(epochKey(prefix), 'fence', String(high));
      await d.set(legacyFenceKey(prefix), '7'); // written by an old client, long ago
    }
    const lock = await client(prefix).acquire('r', 1_500);
    expect(lock.fence).toBeGreaterThan(high);
    await lock.release();
    // Every node's register stays at or above the hash's; the old key is kept in step.
    for (const d of env.direct) {
      expect(Number(await d.hget(epochKey(prefix), 'fence'))).toBeGreaterThanOrEqual(high);
    }
  });
});

// probe.lua run directly on one real redis-server (node 1, its own prefix per test): the reply of a
// check (ARGV[1] '1') and of the fast read (ARGV[1] '0') for each state of the sentinel.
interface CheckReply {
  createdAt: string | null;
  quarantineUntil: number;
  fence: number;
  runIdNow: string;
  started: number;
  cause: string;
  nowMs: number;
  anchor: number;
  reseed: string;
}

async function check(prefix: string, options: { ceiling?: number; detect?: string; mayStart?: boolean; forced?: string } = {}) {
  const r = await runProbe(env.direct[0]!, prefix, 'check', { ...options, ceiling: options.ceiling ?? MAX_TTL });
  return {
    createdAt: (r[0] as string | null) ?? null,
    quarantineUntil: Number(r[1] ?? 0),
    fence: Number(r[4] ?? 0),
    runIdNow: String(r[5]),
    started: Number(r[7]),
    cause: String(r[8]),
    nowMs: probeNowMs(r),
    anchor: Number(r[11]),
    reseed: String(r[12]),
  } satisfies CheckReply;
}

async function fast(prefix: string) {
  const r = (await runProbe(env.direct[0]!, prefix, 'fast', { ceiling: MAX_TTL, mayStart: false })) as Array<string | null>;
  return { createdAt: r[0], quarantineUntil: r[1], runId: r[2], maxTtlMs: r[3], fence: Number(r[4] ?? 0), suspect: r[5], reseed: r[8] };
}

/** A prefix whose sentinel node 1's first check reconciled (the state of a healthy node). */
async function reconciled(name: string): Promise<string> {
  const prefix = uniquePrefix(name);
  await markNodeClean(env.direct[0]!, { keyPrefix: prefix, maxTtlMs: MAX_TTL });
  const first = await check(prefix);
  expect(first.cause).toBe('');
  return prefix;
}

describe('probe.lua, a check on one node', () => {
  it('no sentinel: a data-loss quarantine of the whole ceiling, the register floored at now × 1000, a reseed pending', async () => {
    const prefix = uniquePrefix('probe-no-sentinel');
    const r = await check(prefix);
    expect(r.cause).toBe('data-loss');
    expect(r.started).toBe(1);
    expect(r.createdAt).not.toBeNull();
    expect(r.quarantineUntil).toBe(r.nowMs + MAX_TTL);
    expect(r.fence).toBeGreaterThanOrEqual(r.nowMs * 1000);
    expect(r.reseed).toBe('1');
    expect(r.anchor).toBe(1);
    expect(await env.direct[0]!.hget(epochKey(prefix), 'cause')).toBe('data-loss');
    expect(Number(await env.direct[0]!.hget(epochKey(prefix), 'maxTtlMs'))).toBe(MAX_TTL);
  });

  it('no sentinel, but the caller may not start a quarantine (or detects nothing): nothing is written', async () => {
    for (const options of [{ mayStart: false }, { detect: '0' }]) {
      const prefix = uniquePrefix('probe-no-start');
      const r = await check(prefix, options);
      expect(r.cause).toBe('');
      expect(r.started).toBe(0);
      expect(r.createdAt).toBeNull();
      expect(await env.direct[0]!.exists(epochKey(prefix), anchorKey(prefix))).toBe(0);
    }
  });

  it('a reconciled sentinel: the next check finds nothing, starts nothing, and leaves the register where it was', async () => {
    const prefix = await reconciled('probe-clean');
    const before = Number(await env.direct[0]!.hget(epochKey(prefix), 'fence'));
    const r = await check(prefix);
    expect(r).toMatchObject({ cause: '', started: 0, reseed: '', anchor: 1 });
    expect(r.fence).toBe(before);
    expect(r.quarantineUntil).toBeLessThanOrEqual(r.nowMs);
  });

  it('a cause the caller brings (rollback, clock-jump) quarantines for the ceiling; only rollback asks for a reseed', async () => {
    for (const forced of ['rollback', 'clock-jump']) {
      const prefix = await reconciled(`probe-forced-${forced}`);
      const r = await check(prefix, { forced });
      expect(r.cause).toBe(forced);
      expect(r.started).toBe(1);
      expect(r.quarantineUntil).toBe(r.nowMs + MAX_TTL);
      expect(r.reseed).toBe(forced === 'rollback' ? '1' : '');
    }
  });

  it('evicted_keys other than recorded, or fewer commands processed than recorded: an eviction quarantine, no reseed', async () => {
    for (const [field, value] of [
      ['evicted', '999999'],
      ['processed', '999999999999'],
    ] as const) {
      const prefix = await reconciled(`probe-evicted-${field}`);
      await env.direct[0]!.hset(epochKey(prefix), field, value);
      const r = await check(prefix);
      expect(r.cause).toBe('eviction');
      expect(r.quarantineUntil).toBe(r.nowMs + MAX_TTL);
      expect(r.reseed).toBe('');
      // The check records what it saw: the next one finds nothing.
      expect((await check(prefix)).cause).toBe('');
    }
  });

  it('a count of data-replacing commands other than recorded: a rollback quarantine', async () => {
    const prefix = await reconciled('probe-replacing');
    await env.direct[0]!.hset(epochKey(prefix), 'replacing', '999999');
    const r = await check(prefix);
    expect(r.cause).toBe('rollback');
    expect(r.reseed).toBe('1');
    expect((await check(prefix)).cause).toBe('');
  });

  it('a sentinel of another process: a restart quarantine until this process started + the ceiling, the old run_id kept', async () => {
    const d = env.direct[0]!;
    const ceiling = 600_000; // far longer than the server's uptime: the quarantine is running
    const prefix = uniquePrefix('probe-restart');
    await markNodeClean(d, { keyPrefix: prefix, maxTtlMs: ceiling });
    expect((await check(prefix, { ceiling })).cause).toBe('');
    await d.hset(epochKey(prefix), 'runId', 'f'.repeat(40));
    const uptime = async () => Number(/uptime_in_seconds:(\d+)/.exec(await d.info('server'))![1]);
    // An uptime of 3 s or more, so that "started (uptime − 1) s ago" is not "now" (as it is at 1 s).
    await waitFor(async () => (await uptime()) >= 3, 10_000, 'an uptime of 3 s');
    const before = await uptime();
    const r = await check(prefix, { ceiling });
    const after = await uptime();
    expect(r.cause).toBe('restart');
    expect(r.started).toBe(1);
    expect(r.runIdNow).not.toBe('f'.repeat(40));
    expect(await d.hget(epochKey(prefix), 'prevRunId')).toBe('f'.repeat(40));
    expect(await d.hget(epochKey(prefix), 'runId')).toBe(r.runIdNow);
    // The process started at the latest (uptime − 1) s before now (uptime counts whole seconds).
    expect(r.quarantineUntil).toBeGreaterThanOrEqual(r.nowMs + ceiling - Math.max(0, after - 1) * 1000);
    expect(r.quarantineUntil).toBeLessThanOrEqual(r.nowMs + ceiling - Math.max(0, before - 1) * 1000);
    expect(Number(await d.hget(epochKey(prefix), 'serverStartedAt'))).toBe(r.quarantineUntil - ceiling);
    expect(r.reseed).toBe('1');
  });

  it('a client whose ceiling is not the recorded one only reads: it records nothing and starts nothing', async () => {
    const prefix = await reconciled('probe-other-ceiling');
    await env.direct[0]!.hset(epochKey(prefix), 'runId', 'f'.repeat(40), 'evicted', '999999');
    const r = await check(prefix, { ceiling: MAX_TTL - 1 });
    expect(r).toMatchObject({ cause: '', started: 0 });
    expect(await env.direct[0]!.hget(epochKey(prefix), 'runId')).toBe('f'.repeat(40));
    expect(await env.direct[0]!.hget(epochKey(prefix), 'evicted')).toBe('999999');
  });
});

describe('probe.lua, the fast read', () => {
  it('says why a check must judge it: the anchor gone, evicted_keys moved, a RESETSTAT, data-replacing calls moved', async () => {
    const prefix = await reconciled('probe-fast');
    const d = env.direct[0]!;
    expect(await fast(prefix)).toMatchObject({ suspect: '', reseed: '' });
    expect((await fast(prefix)).fence).toBe(Number(await d.hget(epochKey(prefix), 'fence')));
    await d.del(anchorKey(prefix));
    expect((await fast(prefix)).suspect).toBe('anchor');
    await d.set(anchorKey(prefix), '1');
    await d.hset(epochKey(prefix), 'evicted', '999999');
    const evictedRead = await fast(prefix);
    expect(evictedRead.suspect).toBe('evicted');
    // The register is the hash's `fence`, never another field of it (probe.lua:98).
    expect(evictedRead.fence).toBe(Number(await d.hget(epochKey(prefix), 'fence')));
    await check(prefix); // records the real count (an eviction quarantine)
    await d.hset(epochKey(prefix), 'processed', '999999999999');
    expect((await fast(prefix)).suspect).toBe('resetstat');
    await check(prefix);
    await d.hset(epochKey(prefix), 'replacing', '999999');
    expect((await fast(prefix)).suspect).toBe('replacing');
    await check(prefix);
    expect(await fast(prefix)).toMatchObject({ suspect: '', reseed: '1' });
  });

  it('reads the sentinel as it is: a running quarantine is reported with its own end, not its start', async () => {
    const prefix = await reconciled('probe-fast-quarantine');
    const q = await check(prefix, { forced: 'rollback' });
    expect(q.quarantineUntil).toBeGreaterThan(q.nowMs);
    const e = await env.direct[0]!.hgetall(epochKey(prefix));
    expect(await fast(prefix)).toMatchObject({
      createdAt: e.createdAt,
      quarantineUntil: String(q.quarantineUntil),
      runId: q.runIdNow,
      maxTtlMs: String(MAX_TTL),
      reseed: '1',
    });
    expect(e.createdAt).not.toBe(String(q.quarantineUntil));
  });

  it('reports the old-layout key when it is the higher register, and no sentinel as none', async () => {
    const prefix = await reconciled('probe-fast-legacy');
    const high = Number(await env.direct[0]!.hget(epochKey(prefix), 'fence')) + 5;
    await env.direct[0]!.set(legacyFenceKey(prefix), String(high));
    expect((await fast(prefix)).fence).toBe(high);
    // The lowest register there is: an old-layout key of 1 and no register in the hash.
    const low = uniquePrefix('probe-fast-legacy-1');
    await env.direct[0]!.set(legacyFenceKey(low), '1');
    expect((await fast(low)).fence).toBe(1);
    const none = await fast(uniquePrefix('probe-fast-none'));
    expect(none.createdAt).toBeNull();
    expect(none.fence).toBe(0);
  });
});
