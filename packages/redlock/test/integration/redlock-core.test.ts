import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import {
  InvalidArgumentError,
  LockContendedError,
  LockExpiredError,
  metaTextOf,
  Redlock,
  readEpoch,
  readFenceRegister,
  tokenOf,
  type OperationEvent,
  type RedlockSettings,
} from '@redlock-console/redlock';
import { uniquePrefix, waitFor } from '@/test/support/cluster';
import { redlockEnv } from '@/test/support/redlock-env';

const env = redlockEnv();
const { redlocks, unhandled } = env;

async function redlock(name: string, settings: Partial<RedlockSettings> = {}, nodes?: Array<string | Redis>): Promise<Redlock> {
  // Node timeouts of 1 s unless a test asks otherwise: these tests are about what the nodes hold and
  // vote, and at the default 100 ms a loaded machine (load 14–17) read every node as a timeout.
  const r = new Redlock(nodes ?? env.cluster.urls, { keyPrefix: uniquePrefix(name), retryCount: 0, nodeTimeoutMs: 1_000, ...settings });
  redlocks.push(r);
  await r.markNodesClean();
  return r;
}

/** The lock key of `resource` on every node (null where absent). */
/** The token each node's key holds (a lock key's value is `<token> <metadata JSON>`), or null. */
const valuesOf = (r: Redlock, resource: string) =>
  Promise.all(
    env.direct.map(async (c) => {
      const value = await c.get(r.lockKey(resource));
      return value === null ? null : tokenOf(value);
    }),
  );
/** The holder metadata in each node's key (null: no key, or a bare token). */
const metasOf = (r: Redlock, resource: string) =>
  Promise.all(
    env.direct.map(async (c) => {
      const value = await c.get(r.lockKey(resource));
      const text = value === null ? null : metaTextOf(value);
      return text === null ? null : (JSON.parse(text) as Record<string, string>);
    }),
  );

describe('Redlock on five real masters', () => {
  it('acquire sets the token on every node with the ttl, holder metadata and a fence; release removes it all', async () => {
    const seededAt = Date.now();
    const r = await redlock('basic');
    const before = Date.now();
    const t0 = performance.now();
    const lock = await r.acquire('invoice-42', 2_000, { metadata: { purpose: 'nightly billing', owner: 'billing-worker' } });
    expect(lock.resources).toEqual(['invoice-42']);
    expect(lock.token).toMatch(/^[A-Za-z0-9_-]{27}$/);
    // The ttl less the drift (22 ms) and the time since the attempt began, no less (a fixed 1,900
    // read a loaded machine's 144 ms acquire as a validity cut short); floored to the ms.
    const validity = lock.validityMs;
    expect(validity).toBeGreaterThanOrEqual(2_000 - 22 - (performance.now() - t0) - 1);
    expect(validity).toBeLessThanOrEqual(2_000 - 22);
    expect(lock.expiresAt).toBeGreaterThan(before + 1_900);
    expect(r.quorum).toBe(3);
    expect(r.nodeCount).toBe(5);
    expect(r.nodeLabels).toEqual(env.cluster.urls.map((u) => new URL(u).host));
    // Fences are registers seeded at now(ms) × 1000 by markNodesClean, plus one per grant.
    expect(lock.fence).toBeGreaterThan(seededAt * 1000);
    expect(lock.fence).toBeLessThan((Date.now() + 1) * 1000);

    // Decided at the quorum; give the last nodes a moment.
    await waitFor(async () => (await valuesOf(r, 'invoice-42')).every((v) => v === lock.token), 1_000, 'the key on all 5 nodes');
    for (const c of env.direct) {
      const pttl = await c.pttl(r.lockKey('invoice-42'));
      // Set after t0: no more gone than the time since (a fixed 1,800 read a loaded machine's 245 ms
      // as a ttl cut short).
      expect(pttl).toBeGreaterThan(2_000 - (performance.now() - t0) - 2);
      expect(pttl).toBeLessThanOrEqual(2_000);
    }
    // The holder metadata travels in the key's value, after the token and one space.
    const metas = await metasOf(r, 'invoice-42');
    for (const meta of metas) {
      expect(meta).toMatchObject({
        owner: 'billing-worker',
        purpose: 'nightly billing',
        pid: String(process.pid),
        extensions: '0',
        ttlMs: '2000',
      });
      expect(meta!.host).toBeTruthy();
      expect(Number(meta!.acquiredAt)).toBeGreaterThanOrEqual(before);
    }
    // The fence is recorded in the metadata (by the fence round, which keeps the key's TTL) and in
    // the register of at least a quorum of nodes.
    expect(metas.filter((m) => m!.fence === String(lock.fence)).length).toBeGreaterThanOrEqual(3);
    for (const c of env.direct) expect(await c.pttl(r.lockKey('invoice-42'))).toBeGreaterThan(1_800);
    const registers = await Promise.all(env.direct.map((c) => readFenceRegister(c, r.settings.keyPrefix)));
    expect(registers.filter((v) => v >= lock.fence!).length).toBeGreaterThanOrEqual(3);

    const result = await (await lock.release()).settled;
    expect(result.deleted).toBe(5);
    expect(result.complete).toBe(true);
    expect(result.votes.every((v) => v.vote === 'for' && v.reason === 'ok')).toBe(true);
    expect(await valuesOf(r, 'invoice-42')).toEqual([null, null, null, null, null]);
    // Nothing of the lock is left: only the node's epoch sentinel (with the fence register in it)
    // and the anchor its rollback detector WATCHes remain.
    const prefix = r.settings.keyPrefix;
    for (const c of env.direct) expect((await c.keys(`${prefix}*`)).sort()).toEqual([`${prefix}anchor`, `${prefix}epoch`]);
    expect(lock.validityMs).toBe(0);

    // Releasing twice is not an error.
    const again = await (await lock.release()).settled;
    expect(again.deleted).toBe(0);
    expect(again.votes.every((v) => v.reason === 'not-held')).toBe(true);
  });

  it('unfenced locks have fence null and skip the second round', async () => {
    const r = await redlock('unfenced');
    const lock = await r.acquire('u', 1_000, { fenced: false });
    expect(lock.fence).toBeNull();
    await waitFor(async () => (await valuesOf(r, 'u')).every((v) => v === lock.token), 1_000, 'the key on all 5 nodes');
    const metas = await metasOf(r, 'u');
    expect(metas.map((m) => m!.fence)).toEqual([undefined, undefined, undefined, undefined, undefined]);
    expect(metas.map((m) => m!.extensions)).toEqual(['0', '0', '0', '0', '0']);
    await lock.release();
  });

  it('acquires sent together share one TIME, one epoch read and one fence read per node (grant-group.ts)', async () => {
    const r = await redlock('shared-reads');
    const calls = async () => {
      const stats = await env.direct[0]!.info('commandstats');
      const count = (name: string) => Number(new RegExp(`cmdstat_${name}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
      return { hmget: count('hmget'), time: count('time') };
    };
    const register = await readFenceRegister(env.direct[0]!, r.settings.keyPrefix);
    const before = await calls();
    const locks = await Promise.all(Array.from({ length: 40 }, (_, i) => r.acquire(`together-${i}`, 2_000)));
    const keys = locks.map((l) => r.lockKey(l.resources[0]!));
    await waitFor(async () => (await env.direct[0]!.exists(...keys)) === 40, 1_000, 'the 40 grants on node 1');
    const after = await calls();
    // One batch per node (at most two if the tick was split), not 40 reads of each kind.
    expect(after.hmget - before.hmget).toBeGreaterThanOrEqual(1);
    expect(after.hmget - before.hmget).toBeLessThanOrEqual(2);
    expect(after.time - before.time).toBeLessThanOrEqual(2);
    // Every grant still read the register after its own SET: its fence is above the register before.
    for (const lock of locks) expect(lock.fence).toBeGreaterThan(register);
    expect(new Set(locks.map((l) => l.token)).size).toBe(40);
    for (const lock of locks) expect((await lock.release()).deleted).toBeGreaterThanOrEqual(3);
  });

  it('releases sent together each get their own result; a second release in the same tick deletes nothing', async () => {
    const r = await redlock('together-releases');
    const locks = await Promise.all(Array.from({ length: 40 }, (_, i) => r.acquire(`apart-${i}`, 2_000, { fenced: false })));
    const keys = locks.map((l) => r.lockKey(l.resources[0]!));
    await waitFor(
      async () => (await Promise.all(env.direct.map((c) => c.exists(...keys)))).every((n) => n === 40),
      1_000,
      'every key everywhere',
    );
    const answered = await Promise.all([...locks.map((l) => l.release()), r.releaseToken([...locks[0]!.resources], locks[0]!.token)]);
    const results = await Promise.all(answered.map((res) => res.settled));
    expect(results.slice(0, 40).map((res) => res.deleted)).toEqual(new Array(40).fill(5));
    expect(results[40]!.deleted).toBe(0);
    expect(results[40]!.votes.map((v) => v.reason)).toEqual(new Array(5).fill('not-held'));
    expect(await Promise.all(env.direct.map((c) => c.exists(...keys)))).toEqual([0, 0, 0, 0, 0]);
  });

  it('a release and a new acquire of the same resource in one tick: the release goes first', async () => {
    const r = await redlock('same-tick');
    const first = await r.acquire('again', 2_000, { fenced: false });
    const [answered, second] = await Promise.all([first.release(), r.acquire('again', 2_000, { fenced: false })]);
    expect((await answered.settled).deleted).toBe(5);
    expect(second.token).not.toBe(first.token);
    await second.release();
  });

  it('contention between two clients: exactly one wins, the other gets LockContendedError with votes', async () => {
    // A node timeout a loaded machine cannot outrun (the default 100 ms turned a stalled reply into
    // a timeout vote and the loser's error into QuorumUnavailableError): this test is about contention.
    const a = await redlock('contend', { nodeTimeoutMs: 1_000 });
    const b = new Redlock(env.cluster.urls, { keyPrefix: a.settings.keyPrefix, retryCount: 0, nodeTimeoutMs: 1_000 });
    redlocks.push(b);
    for (let round = 0; round < 20; round++) {
      const results = await Promise.allSettled([a.acquire('hot', 5_000), b.acquire('hot', 5_000)]);
      const won = results.filter((x) => x.status === 'fulfilled');
      const lost = results.filter((x) => x.status === 'rejected');
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(1);
      const err = (lost[0] as PromiseRejectedResult).reason as LockContendedError;
      expect(err).toBeInstanceOf(LockContendedError);
      expect(err.name).toBe('LockContendedError');
      expect(err.votes).toHaveLength(5);
      expect(err.votes.filter((v) => v.reason === 'contended').length).toBeGreaterThanOrEqual(3);
      expect(err.resources).toEqual(['hot']);
      await (won[0] as PromiseFulfilledResult<Awaited<ReturnType<Redlock['acquire']>>>).value.release();
    }
  });

  it('a refused acquire names the holder from its lock value (metadata, never the token)', async () => {
    const a = await redlock('holder');
    const b = new Redlock(env.cluster.urls, { keyPrefix: a.settings.keyPrefix, retryCount: 0 });
    redlocks.push(b);
    const lock = await a.acquire('held', 2_000, { metadata: { owner: 'billing-worker', purpose: 'nightly run' } });
    const err = (await b.acquire('held', 1_000).catch((e: unknown) => e)) as LockContendedError;
    expect(err).toBeInstanceOf(LockContendedError);
    expect(err.holder).toMatchObject({ owner: 'billing-worker', purpose: 'nightly run', ttlMs: '2000' });
    expect(err.message).toContain('held by another client "billing-worker"');
    expect(JSON.stringify(err)).not.toContain(lock.token);
    expect(err.message).not.toContain(lock.token);
    await lock.release();
    // Another library's lock (a bare token): refused the same way, with no holder to name.
    for (const c of env.direct) await c.set(a.lockKey('foreign'), 'someone-else', 'PX', 2_000);
    const foreign = (await b.acquire('foreign', 1_000).catch((e: unknown) => e)) as LockContendedError;
    expect(foreign).toBeInstanceOf(LockContendedError);
    expect(foreign.holder).toBeNull();
    expect(foreign.message).toContain('held by another client (');
  });

  it('multi-resource locks are all or nothing on each node', async () => {
    const r = await redlock('multi');
    // Someone else's key for "b" on node 1 only: node 1 must refuse the whole request and write nothing.
    await env.direct[0]!.set(r.lockKey('b'), 'someone-else', 'PX', 5_000);
    const lock = await r.acquire(['a', 'b', 'c'], 2_000);
    await waitFor(async () => (await valuesOf(r, 'c'))[4] === lock.token, 1_000, 'last node');
    expect(await env.direct[0]!.get(r.lockKey('a'))).toBeNull();
    expect(await env.direct[0]!.get(r.lockKey('c'))).toBeNull();
    expect(await env.direct[0]!.get(r.lockKey('b'))).toBe('someone-else');
    // Every key of the lock carries the same value: the token and the one attempt's metadata.
    for (const c of env.direct.slice(1)) {
      const values = await c.mget(r.lockKey('a'), r.lockKey('b'), r.lockKey('c'));
      expect(values.map((v) => tokenOf(v!))).toEqual([lock.token, lock.token, lock.token]);
      expect(new Set(values).size).toBe(1);
      expect(JSON.parse(metaTextOf(values[0]!)!)).toMatchObject({ ttlMs: '2000', extensions: '0' });
    }
    await lock.release();
    expect(await env.direct[0]!.get(r.lockKey('b'))).toBe('someone-else'); // not ours: untouched

    // Held on a majority: refused as a whole, nothing of the request remains anywhere.
    const other = await r.acquire('b', 2_000);
    await expect(r.acquire(['a', 'b'], 1_000)).rejects.toBeInstanceOf(LockContendedError);
    await waitFor(async () => (await valuesOf(r, 'a')).every((v) => v === null), 2_000, "the refused request's keys removed");
    await other.release();
  });

  it('extend: pushes the expiry on a majority, counts extensions in the metadata', async () => {
    const r = await redlock('extend');
    const lock = await r.acquire('e', 500);
    // pace: the lease has run a while before the extend
    await new Promise((res) => setTimeout(res, 200));
    const same = await lock.extend(2_000);
    expect(same).toBe(lock);
    expect(lock.validityMs).toBeGreaterThan(1_900);
    expect(lock.extensions).toBe(1);
    for (const c of env.direct) expect(await c.pttl(r.lockKey('e'))).toBeGreaterThan(1_800);
    // The extension is counted in each key's metadata, and the token in front is unchanged.
    await waitFor(async () => (await metasOf(r, 'e')).every((m) => m?.extensions === '1'), 1_000, 'the count on all 5 nodes');
    for (const meta of await metasOf(r, 'e')) expect(meta).toMatchObject({ extensions: '1', ttlMs: '2000' });
    expect(await valuesOf(r, 'e')).toEqual(Array(5).fill(lock.token));
    // A shorter extend never shortens the keys (PEXPIRE GT).
    await lock.extend(300);
    for (const c of env.direct) expect(await c.pttl(r.lockKey('e'))).toBeGreaterThan(1_500);
    await lock.release();
  });

  it('extend of an expired lock fails with LockExpiredError and sends nothing', async () => {
    const r = await redlock('extend-expired');
    const lost: unknown[] = [];
    r.on('lock-lost', (e) => lost.push(e.reason));
    const lock = await r.acquire('x', 100);
    await waitFor(() => lock.validityMs === 0, 2_000, 'the lease to run out');
    const err = await lock.extend(1_000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LockExpiredError);
    expect((err as LockExpiredError).votes).toEqual([]);
    expect(lost).toHaveLength(1);
    // And a released lock cannot be extended either.
    const other = await r.acquire('y', 1_000);
    await other.release();
    await expect(other.extend(1_000)).rejects.toBeInstanceOf(LockExpiredError);
  });

  it('`await using` releases the lock when the block is left, by return or by throw', async () => {
    const r = await redlock('dispose');
    {
      await using lock = await r.acquire('d', 5_000);
      expect(await valuesOf(r, 'd')).toEqual(Array(5).fill(lock.token));
    }
    // A release answers at a quorum: the last nodes follow within a round trip.
    const gone = async () => (await valuesOf(r, 'd')).every((v) => v === null);
    await waitFor(gone, 2_000, 'released on every node after the block');
    const thrown = await (async () => {
      await using _lock = await r.acquire('d', 5_000);
      throw new Error('boom');
    })().catch((e: unknown) => e);
    expect((thrown as Error).message).toBe('boom');
    await waitFor(gone, 2_000, 'released on every node after the throw');
  });

  it("a late release never deletes a newer holder's key", async () => {
    const r = await redlock('newer');
    const old = await r.acquire('shared', 100);
    // pace: old's lease is over (on the nodes too: their TTL counts from later)
    await new Promise((res) => setTimeout(res, 150));
    const newer = await r.acquire('shared', 2_000);
    const result = await old.release();
    expect(result.deleted).toBe(0);
    expect(await valuesOf(r, 'shared')).toEqual(Array(5).fill(newer.token));
    for (const meta of await metasOf(r, 'shared')) expect(meta).toMatchObject({ ttlMs: '2000' });
    // A force-release with the wrong token is refused the same way.
    expect((await r.releaseToken('shared', old.token)).deleted).toBe(0);
    // Ownership is the whole token: a part of it is not the holder (the scripts match `<token>`
    // or `<token> `, never a shorter prefix), and a token never holds a space.
    expect((await r.releaseToken('shared', newer.token.slice(0, -1))).deleted).toBe(0);
    await expect(r.releaseToken('shared', `${newer.token} {`)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(r.extendToken('shared', newer.token.slice(0, 10), 1_000)).rejects.toBeInstanceOf(LockExpiredError);
    expect(await valuesOf(r, 'shared')).toEqual(Array(5).fill(newer.token));
    await newer.release();
  });

  it('extendToken / releaseToken work from a bare token (the stateless HTTP service)', async () => {
    // Node timeouts of 1 s: not about latency (at 100 ms a loaded machine's extend read as five timeouts).
    const r = await redlock('token', { nodeTimeoutMs: 1_000 });
    const holder = await r.acquire('t', 1_000);
    const service = new Redlock(env.cluster.urls, { keyPrefix: r.settings.keyPrefix, nodeTimeoutMs: 1_000 });
    redlocks.push(service);
    const wall0 = Date.now();
    const t0 = performance.now();
    const extended = await service.extendToken('t', holder.token, 3_000);
    // The ttl less the drift (32 ms) and the time the extension took, no less (floored to the ms).
    expect(extended.validityMs).toBeGreaterThanOrEqual(3_000 - 32 - (performance.now() - t0) - 1);
    expect(extended.expiresAt).toBeGreaterThanOrEqual(wall0 + 3_000 - 32);
    expect(extended.votes.filter((v) => v.vote === 'for').length).toBeGreaterThanOrEqual(3);
    await expect(service.extendToken('t', 'not-the-token', 3_000)).rejects.toBeInstanceOf(LockExpiredError);
    const released = await (await service.releaseToken(['t'], holder.token)).settled;
    expect(released.deleted).toBe(5);
    expect(await valuesOf(r, 't')).toEqual([null, null, null, null, null]);
  });

  it('emits outcome events with duration and votes', async () => {
    const r = await redlock('events');
    const events: Array<[string, OperationEvent]> = [];
    for (const op of ['acquire', 'extend', 'release'] as const) r.on(op, (e) => events.push([op, e]));
    const lock = await r.acquire('ev', 1_000);
    await lock.extend(1_000);
    await lock.release();
    await r
      .acquire('ev', 1_000)
      .then((l) => r.acquire('ev', 1_000).finally(() => l.release()))
      .catch(() => undefined);
    expect(events.map(([op, e]) => `${op}:${e.ok}`)).toEqual([
      'acquire:true',
      'extend:true',
      'release:true',
      'acquire:true',
      'acquire:false',
      'release:true',
    ]);
    for (const [, e] of events) {
      expect(e.durationMs).toBeGreaterThanOrEqual(0);
      expect(e.votes).toHaveLength(5);
      expect(e.resources).toEqual(['ev']);
    }
    expect(events[4]![1].error).toBeInstanceOf(LockContendedError);
    expect(events[0]![1].fence).toBe(lock.fence);
  });

  it('falls back to EVAL when the script cache is empty (NOSCRIPT), also with clients passed in', async () => {
    const own = env.cluster.urls.map((url) => new Redis(url, { maxRetriesPerRequest: 1 }));
    for (const c of own) c.on('error', () => undefined);
    try {
      // A node timeout of 1 s: the EVAL fallback's extra round trip on a loaded machine is not a timeout vote.
      const r = await redlock('noscript', { nodeTimeoutMs: 1_000 }, own);
      await Promise.all(env.direct.map((c) => c.script('FLUSH')));
      const lock = await r.acquire('n', 1_000);
      await lock.extend(1_000);
      await Promise.all(env.direct.map((c) => c.script('FLUSH')));
      expect((await (await lock.release()).settled).deleted).toBe(5);
      // quit() leaves clients it did not create alone.
      await r.quit();
      expect(own.every((c) => c.status === 'ready')).toBe(true);
      expect(await own[0]!.ping()).toBe('PONG');
    } finally {
      for (const c of own) c.disconnect();
    }
  });

  it('quit() closes the connections it opened; later acquires fail without hanging', async () => {
    const r = await redlock('quit', { nodeTimeoutMs: 1_000 });
    await (await r.acquire('q', 5_000)).release();
    await r.quit();
    await expect(r.acquire('q', 1_000)).rejects.toMatchObject({ name: 'QuorumUnavailableError' });
    await r.quit(); // idempotent
  });

  it('markNodesClean writes the clean sentinel and raises the fence register on every node', async () => {
    const r = new Redlock(env.cluster.urls, { keyPrefix: uniquePrefix('mark'), maxTtlMs: 5_000 });
    redlocks.push(r);
    const before = Date.now();
    await r.markNodesClean();
    for (const c of env.direct) {
      const epoch = await readEpoch(c, r.settings.keyPrefix);
      expect(epoch).toMatchObject({ origin: 'clean', maxTtlMs: 5_000 });
      expect(epoch!.quarantineUntil).toBe(epoch!.createdAt);
      expect(await readFenceRegister(c, r.settings.keyPrefix)).toBeGreaterThanOrEqual(before * 1000);
    }
  });

  it('bad input is refused with InvalidArgumentError before any Redis traffic', async () => {
    const r = await redlock('invalid', { maxTtlMs: 10_000 });
    const lock = await r.acquire('ok', 5_000);
    await new Promise((res) => setTimeout(res, 100)); // pace: startup traffic (script loads, checks) ends, at no signal the API gives
    const commandCount = async () => {
      let total = 0;
      for (const c of env.direct) {
        const stats = await c.info('commandstats');
        for (const m of stats.matchAll(/^cmdstat_(\w+):calls=(\d+)/gm)) if (m[1] !== 'info') total += Number(m[2]);
      }
      return total;
    };
    const before = await commandCount();
    const calls: Array<() => Promise<unknown>> = [
      () => r.acquire('', 1_000),
      () => r.acquire([], 1_000),
      () => r.acquire('x'.repeat(513), 1_000),
      () => r.acquire(['a', 'a'], 1_000),
      () =>
        r.acquire(
          Array.from({ length: 65 }, (_, i) => `r${i}`),
          1_000,
        ),
      () => r.acquire('a', 0),
      () => r.acquire('a', -5),
      () => r.acquire('a', 1.5),
      () => r.acquire('a', Number.NaN),
      () => r.acquire('a', Number.POSITIVE_INFINITY),
      () => r.acquire('a', 10_001),
      () => r.acquire('a', 2),
      () => r.acquire('a', 1_000, { retryCount: -1 }),
      () => r.acquire('a', 1_000, { retryDelayMs: Number.NaN }),
      () => r.acquire('a', 1_000, { retryJitterMs: 1.5 }),
      () => r.acquire('a', 1_000, { fenced: 'yes' as never }),
      () => r.acquire('a', 1_000, { metadata: { fence: '7' } }),
      () => r.acquire('a', 1_000, { metadata: { note: 'x'.repeat(300) } }),
      () => r.acquire('a', 1_000, { metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])) }),
      () => r.acquire('a', 1_000, { signal: 'nope' as never }),
      () => r.using('a', 1_000, 'not a function' as never),
      () => r.using('', 1_000, async () => 1),
      () => r.extendToken('a', '', 1_000),
      () => r.extendToken('a', 'tok', 0),
      () => r.releaseToken('', 'tok'),
      () => r.releaseToken('a', 'x'.repeat(300)),
      () => lock.extend(Number.NaN),
      () => lock.extend(10_001),
    ];
    for (const call of calls) {
      const err = await call().then(
        () => null,
        (e: unknown) => e,
      );
      expect(err, call.toString()).toBeInstanceOf(InvalidArgumentError);
    }
    expect(await commandCount()).toBe(before);
    await lock.release();
  });

  it('no unhandled rejections happened in this file', () => {
    expect(unhandled).toEqual([]);
  });
});
