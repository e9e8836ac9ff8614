import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { epochKey, legacyFenceKey, markNodeClean } from '@redlock-console/redlock';
import { anchorKey } from '../../src/keys';
import { startTestCluster, uniquePrefix, waitFor, type TestCluster } from '@/test/support/cluster';
import { probeNowMs, runProbe } from '../support/probe';

// probe.lua's check (ARGV[1] '1') run directly on real redis-servers: its decision (which cause,
// until when) and what it writes, for the Lua mutants of its lines 128–211
// (scripts/mutation/lua-mutants.ts, docs/mutation-lua.md). Two masters: `plain` never synced from
// another server; `synced` did (REPLICAOF `plain`, then REPLICAOF NO ONE: master_replid2 is set),
// as a promoted replica has.
const CEILING = 600_000; // far longer than either server's uptime: a restart quarantine is running
let cluster: TestCluster;
let plain: Redis;
let synced: Redis;

const info = async (d: Redis, section: string, field: string) => new RegExp(`${field}:([^\\r\\n]+)`).exec(await d.info(section))![1]!;
const uptime = async (d: Redis) => Number(await info(d, 'server', 'uptime_in_seconds'));

beforeAll(async () => {
  cluster = await startTestCluster({ nodes: 2 });
  const [plainUrl, syncedUrl] = cluster.supervisor.directUrls().map((u) => new URL(u));
  plain = new Redis(plainUrl!.toString(), { maxRetriesPerRequest: 1 });
  synced = new Redis(syncedUrl!.toString(), { maxRetriesPerRequest: 1 });
  if (plainUrl!.password) await synced.config('SET', 'masterauth', decodeURIComponent(plainUrl!.password));
  await synced.replicaof(plainUrl!.hostname, Number(plainUrl!.port));
  await waitFor(async () => (await info(synced, 'replication', 'master_link_status')) === 'up', 10_000, 'the replica in sync');
  await synced.replicaof('NO', 'ONE');
  expect(await info(synced, 'replication', 'master_replid2')).not.toMatch(/^0+$/);
  expect(await info(plain, 'replication', 'master_replid2')).toMatch(/^0+$/);
  // An uptime of 3 s or more on both: a process start "(uptime − 1) s before now" is not now.
  await waitFor(async () => (await uptime(plain)) >= 3 && (await uptime(synced)) >= 3, 10_000, 'an uptime of 3 s');
});
afterAll(async () => {
  plain?.disconnect();
  synced?.disconnect();
  await cluster?.stop();
});

interface Options {
  ceiling?: number;
  detect?: string;
  mayStart?: boolean;
  forced?: string;
}

async function check(d: Redis, prefix: string, options: Options = {}) {
  const r = await runProbe(d, prefix, 'check', { ...options, ceiling: options.ceiling ?? CEILING });
  return {
    reply: r,
    quarantineUntil: Number(r[1] ?? 0),
    fence: Number(r[4] ?? 0),
    started: r[7],
    cause: r[8],
    nowMs: probeNowMs(r),
  };
}

/** A prefix with a clean sentinel on `d` (no quarantine) that a first check reconciled. */
async function reconciled(d: Redis, name: string, options: Options = {}): Promise<string> {
  const prefix = uniquePrefix(name);
  await markNodeClean(d, { keyPrefix: prefix, maxTtlMs: options.ceiling ?? CEILING });
  expect((await check(d, prefix, options)).cause).toBe('');
  return prefix;
}

describe('probe.lua check: the replication id and a process that synced from another', () => {
  it('a master that never synced, its replication id changed (it took a replica): no quarantine, the new id recorded', async () => {
    const prefix = await reconciled(plain, 'check-replid-plain');
    await plain.hset(epochKey(prefix), 'replid', 'f'.repeat(40));
    const r = await check(plain, prefix);
    expect(r.cause).toBe('');
    expect(r.started).toBe(0);
    expect(await plain.hget(epochKey(prefix), 'replid')).toBe(await info(plain, 'replication', 'master_replid'));
  });

  it('a process that synced from another, its replication id changed: a "replaced" quarantine of the ceiling from now', async () => {
    const prefix = await reconciled(synced, 'check-replid-synced');
    await synced.hset(epochKey(prefix), 'replid', 'f'.repeat(40));
    const r = await check(synced, prefix);
    expect(r.cause).toBe('replaced');
    expect(r.quarantineUntil).toBe(r.nowMs + CEILING);
    expect(await synced.hget(epochKey(prefix), 'replid')).toBe(await info(synced, 'replication', 'master_replid'));
    // Recorded: the next check finds nothing.
    expect((await check(synced, prefix)).cause).toBe('');
  });

  it('a restart of a process that synced from another: quarantined from now (its data is as of the sync), not from its start', async () => {
    const prefix = await reconciled(synced, 'check-restart-synced');
    await synced.hset(epochKey(prefix), 'runId', 'f'.repeat(40));
    const r = await check(synced, prefix);
    expect(r.cause).toBe('restart');
    expect(r.quarantineUntil).toBe(r.nowMs + CEILING);
  });
});

describe('probe.lua check: the replication id, continued', () => {
  it('a sentinel that records no replication id (an older layout): the id recorded, no quarantine, even on a process that synced', async () => {
    const prefix = await reconciled(synced, 'check-replid-none');
    await synced.hdel(epochKey(prefix), 'replid');
    const r = await check(synced, prefix);
    expect(r.cause).toBe('');
    expect(await synced.hget(epochKey(prefix), 'replid')).toBe(await info(synced, 'replication', 'master_replid'));
  });

  it('a client whose ceiling is not the recorded one starts no "replaced" quarantine and records no id', async () => {
    const prefix = await reconciled(synced, 'check-replid-other-ceiling');
    await synced.hset(epochKey(prefix), 'replid', 'f'.repeat(40));
    const r = await check(synced, prefix, { ceiling: CEILING - 1 });
    expect(r.cause).toBe('');
    expect(await synced.hget(epochKey(prefix), 'replid')).toBe('f'.repeat(40));
  });
});

describe('probe.lua check: the quarantine it starts', () => {
  it('the register floor is exactly now × 1000 when the register is below it', async () => {
    for (let i = 0; i < 5; i++) {
      const r = await check(plain, uniquePrefix('check-floor'));
      expect(r.cause).toBe('data-loss');
      expect(r.fence).toBe(r.nowMs * 1000);
    }
  });

  it('a register above the floor is kept, in the hash and in the old-layout key', async () => {
    const prefix = await reconciled(plain, 'check-high-register');
    const high = String(Date.now() * 1000 + 10_000_000_000);
    await plain.hset(epochKey(prefix), 'fence', high);
    await plain.set(legacyFenceKey(prefix), '7');
    const r = await check(plain, prefix, { forced: 'rollback' });
    expect(r.cause).toBe('rollback');
    expect(String(r.fence)).toBe(high);
    expect(await plain.hget(epochKey(prefix), 'fence')).toBe(high);
    expect(await plain.get(legacyFenceKey(prefix))).toBe(high);
  });

  it('a quarantine already running longer is kept: a new cause never shortens it', async () => {
    const prefix = await reconciled(plain, 'check-longer');
    const far = String(Date.now() + 10 * CEILING);
    await plain.hset(epochKey(prefix), 'quarantineUntil', far);
    const r = await check(plain, prefix, { forced: 'clock-jump' });
    expect(r.cause).toBe('clock-jump');
    expect(r.started).toBe(1);
    expect(String(r.quarantineUntil)).toBe(far);
    expect(await plain.hget(epochKey(prefix), 'quarantineUntil')).toBe(far);
  });

  it('a restart of a process older than the ceiling: the cause recorded, but nothing started (the quarantine ends now)', async () => {
    const ceiling = 1_000; // the process is up 3 s or more: every lock of the old one has expired
    const prefix = await reconciled(plain, 'check-restart-old', { ceiling });
    await plain.hset(epochKey(prefix), 'runId', 'f'.repeat(40));
    const r = await check(plain, prefix, { ceiling });
    expect(r.cause).toBe('restart');
    expect(r.started).toBe(0);
    expect(r.quarantineUntil).toBe(r.nowMs);
    expect(await plain.hget(epochKey(prefix), 'cause')).toBe('restart');
  });

  it('a sentinel that names no process (an older layout): a restart quarantine, no previous run_id recorded', async () => {
    const prefix = await reconciled(plain, 'check-no-runid');
    await plain.hdel(epochKey(prefix), 'runId');
    const r = await check(plain, prefix);
    expect(r.cause).toBe('restart');
    expect(await plain.hget(epochKey(prefix), 'runId')).toBe(r.reply[5]);
    expect(await plain.hexists(epochKey(prefix), 'prevRunId')).toBe(0);
  });
});

describe('probe.lua check: what a check with nothing to find writes', () => {
  it('keeps the process start and names no previous process; records the commands processed at the check', async () => {
    const prefix = await reconciled(plain, 'check-clean-writes');
    const startedAt = await plain.hget(epochKey(prefix), 'serverStartedAt');
    const processed = Number(await info(plain, 'stats', 'total_commands_processed'));
    for (let i = 0; i < 3; i++) expect((await check(plain, prefix)).cause).toBe('');
    expect(await plain.hget(epochKey(prefix), 'serverStartedAt')).toBe(startedAt);
    expect(await plain.hexists(epochKey(prefix), 'prevRunId')).toBe(0);
    expect(Number(await plain.hget(epochKey(prefix), 'processed'))).toBeGreaterThan(processed);
  });

  it('a sentinel that records no count of data-replacing calls (an older layout): the count recorded, no quarantine', async () => {
    const prefix = await reconciled(plain, 'check-replacing-none');
    await plain.hdel(epochKey(prefix), 'replacing');
    expect((await check(plain, prefix)).cause).toBe('');
    expect(await plain.hexists(epochKey(prefix), 'replacing')).toBe(1);
  });

  it('folds an old-layout register of 1 into the hash, and creates no old-layout key where there was none', async () => {
    const prefix = await reconciled(plain, 'check-legacy-one');
    await plain.hdel(epochKey(prefix), 'fence');
    await plain.set(legacyFenceKey(prefix), '1');
    expect((await check(plain, prefix)).fence).toBe(1);
    expect(await plain.hget(epochKey(prefix), 'fence')).toBe('1');
    const other = await reconciled(plain, 'check-legacy-none');
    await check(plain, other);
    expect(await plain.exists(legacyFenceKey(other))).toBe(0);
  });

  it('never writes an existing anchor: a WATCH of it on another connection survives the check', async () => {
    const prefix = await reconciled(plain, 'check-anchor-watch');
    const watcher = plain.duplicate();
    try {
      await watcher.watch(anchorKey(prefix));
      expect((await check(plain, prefix)).cause).toBe('');
      expect(await watcher.multi().get(anchorKey(prefix)).exec()).toEqual([[null, '1']]);
    } finally {
      watcher.disconnect();
    }
  });

  it('a client whose ceiling is not the recorded one reads the old-layout key when it is the higher register', async () => {
    const prefix = await reconciled(plain, 'check-legacy-read');
    const high = Number(await plain.hget(epochKey(prefix), 'fence')) + 5;
    await plain.set(legacyFenceKey(prefix), String(high));
    const r = await check(plain, prefix, { ceiling: CEILING - 1 });
    expect(r.fence).toBe(high);
    expect(Number(await plain.hget(epochKey(prefix), 'fence'))).toBe(high - 5);
    // The lowest register there is: an old-layout key of 1 and none in the hash, read without writing.
    const low = await reconciled(plain, 'check-legacy-read-1');
    await plain.hdel(epochKey(low), 'fence');
    await plain.set(legacyFenceKey(low), '1');
    expect((await check(plain, low, { ceiling: CEILING - 1 })).fence).toBe(1);
    expect(await plain.hexists(epochKey(low), 'fence')).toBe(0);
  });
});
