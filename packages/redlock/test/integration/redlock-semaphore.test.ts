import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import {
  InvalidArgumentError,
  LockContendedError,
  LockExpiredError,
  metaTextOf,
  Permit,
  Redlock,
  SemaphoreLimitMismatchError,
  tokenOf,
  type OperationEvent,
  type RedlockSettings,
} from '@redlock-console/redlock';
import { uniquePrefix, waitFor } from '@/test/support/cluster';
import { redlockEnv } from '@/test/support/redlock-env';
import { waitersAsleep } from '@/test/support/waiters';

// The fenced semaphore on five real masters: a permit is a mutex grant of free slots
// (src/semaphore.ts), so these tests look at what the slots hold and who holds them at once.

const env = redlockEnv();
const { redlocks, unhandled } = env;
const sleep = (ms: number) => new Promise((res) => setTimeout(res, ms));
// The memory test asks for a collection (runInNewContext('gc') after this flag).
setFlagsFromString('--expose-gc');

/** Node timeouts of 1 s: these tests are about who holds what, not latency, on a loaded machine. */
function client(prefix: string, settings: Partial<RedlockSettings> = {}): Redlock {
  const r = new Redlock(env.cluster.urls, { keyPrefix: prefix, retryCount: 0, nodeTimeoutMs: 1_000, ...settings });
  redlocks.push(r);
  return r;
}

async function clients(name: string, count: number, settings: Partial<RedlockSettings> = {}): Promise<Redlock[]> {
  const prefix = uniquePrefix(name);
  const all = Array.from({ length: count }, () => client(prefix, settings));
  await all[0]!.markNodesClean();
  return all;
}

/** The token each node's key of `slot` holds (null where absent). */
const slotTokens = (r: Redlock, resource: string, slot: number) =>
  Promise.all(
    env.direct.map(async (c) => {
      const value = await c.get(`${r.settings.keyPrefix}sem:${resource}:${slot}`);
      return value === null ? null : tokenOf(value);
    }),
  );

/**
 * The fences the slot's keys record (the fence round writes it into the metadata on the nodes that
 * confirmed: a quorum at least, so the first three of them are compared).
 */
const recordedFences = async (r: Redlock, resource: string, slot: number) =>
  (await Promise.all(env.direct.map((c) => c.get(`${r.settings.keyPrefix}sem:${resource}:${slot}`))))
    .map((v) => (v === null ? undefined : (JSON.parse(metaTextOf(v)!) as Record<string, string>)['fence']))
    .filter((f) => f !== undefined)
    .slice(0, 3);

/** Every key under the prefix, on every node (the sentinel and anchor excepted). */
const keysOf = async (r: Redlock) =>
  (await Promise.all(env.direct.map((c) => c.keys(`${r.settings.keyPrefix}*`))))
    .flat()
    .filter((k) => !k.endsWith('epoch') && !k.endsWith('anchor'))
    .sort();

describe('a permit is a grant of one slot of the semaphore', () => {
  it('acquireSemaphore returns a slot, a fence and the limit; the slot key holds the token and the limit; extend and release work on it', async () => {
    const [r] = await clients('basic', 1);
    const permit = await r!.acquireSemaphore('jobs', 3, 2_000, { metadata: { purpose: 'export' } });
    expect(permit).toBeInstanceOf(Permit);
    expect(permit.resource).toBe('jobs');
    expect(permit.limit).toBe(3);
    expect(permit.slots).toEqual([permit.slot]);
    expect([0, 1, 2]).toContain(permit.slot);
    expect(permit.resources).toEqual([`sem:jobs:${permit.slot}`]);
    expect(permit.fence).toBeGreaterThan(0);
    expect(permit.validityMs).toBeGreaterThan(1_000);
    expect(permit.toJSON()).toMatchObject({ resource: 'jobs', limit: 3, slots: [permit.slot], fence: permit.fence });

    const key = `${r!.settings.keyPrefix}sem:jobs:${permit.slot}`;
    await waitFor(
      async () => (await slotTokens(r!, 'jobs', permit.slot)).every((t) => t === permit.token),
      2_000,
      'the slot on all 5 nodes',
    );
    const meta = JSON.parse(metaTextOf((await env.direct[0]!.get(key))!)!) as Record<string, string>;
    expect(meta).toMatchObject({ limit: '3', purpose: 'export', ttlMs: '2000' });
    expect(await recordedFences(r!, 'jobs', permit.slot)).toEqual(Array(3).fill(String(permit.fence)));
    // No mutex key: the slot lives in its own namespace.
    expect(await keysOf(r!)).toEqual([key, key, key, key, key]);

    const extended = await permit.extend(5_000);
    expect(extended).toBe(permit);
    expect(permit.validityMs).toBeGreaterThan(4_000);
    expect(permit.extensions).toBe(1);
    for (const c of env.direct) expect(await c.pttl(key)).toBeGreaterThan(4_000);

    await (
      await permit.release()
    ).settled;
    expect(permit.released).toBe(true);
    expect(await keysOf(r!)).toEqual([]);
    await expect(permit.extend(1_000)).rejects.toBeInstanceOf(LockExpiredError);
  });

  it("a permit's slots and names cannot be changed by its holder, as a lock's resources cannot", async () => {
    const [r] = await clients('frozen', 1);
    const lock = await r!.acquire('plain', 2_000);
    const permit = await r!.acquireSemaphore('frozen', 3, 2_000, { permits: 2 });
    expect(() => (lock.resources as string[]).push('x')).toThrow(TypeError);
    // The slots are what this Redlock's own acquires avoid (slot-claims.ts) and what the holder
    // passes to a fenced store; the names are what release publishes and the events name.
    const slots = permit.slots.slice();
    expect(() => (permit.slots as number[]).push(2)).toThrow(TypeError);
    expect(() => ((permit.slots as number[])[0] = 9)).toThrow(TypeError);
    expect(() => (permit.resources as string[]).pop()).toThrow(TypeError);
    expect(permit.slots).toEqual(slots);
    expect(permit.resources).toEqual(slots.map((s) => `sem:frozen:${s}`));
    await Promise.all([lock.release(), permit.release()]);
  });

  it('bad input is refused with InvalidArgumentError before any traffic', async () => {
    const [r] = await clients('invalid', 1);
    const bad: Array<[unknown, unknown, unknown, unknown, string]> = [
      [['a'], 2, 1_000, {}, 'resource'],
      ['', 2, 1_000, {}, 'resource'],
      ['x'.repeat(513), 2, 1_000, {}, 'resource'],
      ['\uD800', 2, 1_000, {}, 'resource'],
      ['s', 0, 1_000, {}, 'limit'],
      ['s', 1.5, 1_000, {}, 'limit'],
      ['s', 257, 1_000, {}, 'limit'],
      ['s', '3', 1_000, {}, 'limit'],
      ['s', 3, 1_000, { permits: 4 }, 'permits'],
      ['s', 3, 1_000, { permits: 0 }, 'permits'],
      ['s', 100, 1_000, { permits: 65 }, 'permits'],
      ['s', 3, 0, {}, 'ttlMs'],
      ['s', 3, 120_000, {}, 'ttlMs'],
      ['s', 3, 1_000, { metadata: { limit: '9' } }, 'metadata.limit'],
      ['s', 3, 1_000, { retryCount: -1 }, 'retryCount'],
      ['s', 3, 1_000, { signal: 'no' }, 'signal'],
      ['s', 3, 1_000, null, 'options'],
    ];
    for (const [resource, limit, ttl, options, argument] of bad) {
      const call = r!.acquireSemaphore(resource as string, limit as number, ttl as number, options as object);
      await expect(call, `${argument}: ${JSON.stringify([resource, limit, ttl, options])}`).rejects.toMatchObject({
        name: 'InvalidArgumentError',
        argument,
      });
    }
    await expect(r!.usingSemaphore('s', 3, 1_000, 'no' as never)).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(await keysOf(r!)).toEqual([]);
  });
});

describe('never more than `limit` holders', () => {
  // Separate Redlocks (12 processes), and one Redlock with 12 acquires at once (a server): every
  // third client takes 2 permits, so the permits held, not the holders, are what is counted.
  for (const shared of [false, true]) {
    it(`12 ${shared ? 'acquires in one Redlock' : 'clients'}, limit 3, 4 rounds each, some of 2 permits: never more than 3 permits held within their validity, no slot twice`, async () => {
      const limit = 3;
      const made = await clients(shared ? 'crowd-shared' : 'crowd', shared ? 1 : 12);
      const all = shared ? Array<Redlock>(12).fill(made[0]!) : made;
      let held = 0;
      let most = 0;
      const bySlot = new Map<number, number>();
      // Each slot's holders follow one another (the previous one released before the next was
      // granted): their fences must increase, under this concurrency as in sequence.
      const lastFence = new Map<number, number>();
      const problems: string[] = [];
      await Promise.all(
        all.map(async (r, k) => {
          const permits = k % 3 === 0 ? 2 : 1;
          for (let round = 0; round < 4; round++) {
            const permit = await r.acquireSemaphore('pool', limit, 10_000, {
              permits,
              retryCount: 400,
              retryDelayMs: 100,
              retryJitterMs: 50,
            });
            if (permit.slots.length !== permits) problems.push(`client ${k} asked for ${permits} permits, got ${permit.slots.length}`);
            held += permit.slots.length;
            most = Math.max(most, held);
            for (const slot of permit.slots) {
              if (bySlot.has(slot)) problems.push(`client ${k} got slot ${slot} held by client ${bySlot.get(slot)}`);
              bySlot.set(slot, k);
              if (!(permit.fence! > (lastFence.get(slot) ?? 0)))
                problems.push(`slot ${slot}: fence ${permit.fence} after ${lastFence.get(slot)}`);
              lastFence.set(slot, permit.fence!);
            }
            await sleep(5 + Math.random() * 20); // work: the holder uses its permit a while
            if (permit.validityMs <= 0) problems.push(`client ${k} outlived its validity`);
            for (const slot of permit.slots) bySlot.delete(slot);
            held -= permit.slots.length;
            await permit.release();
          }
        }),
      );
      expect(problems).toEqual([]);
      // Twelve clients for three permits: the semaphore was full, and never over.
      expect(most).toBe(limit);
      console.log(`48 grants of a 3-permit semaphore (${shared ? 'one Redlock' : '12 Redlocks'}): at most ${most} permits held at once`);
    }, 120_000);
  }

  it('k of n, all or nothing: 2 permits that do not fit are refused and leave no slot held; 1 that fits is granted', async () => {
    const [a, b] = await clients('k-of-n', 2);
    const two = await a!.acquireSemaphore('pair', 3, 10_000, { permits: 2 });
    expect(two.slots).toHaveLength(2);
    expect(two.resources).toEqual(two.slots.map((s) => `sem:pair:${s}`));
    const free = [0, 1, 2].find((s) => !two.slots.includes(s))!;

    // Its first attempt (random slots) meets A's; the read after it finds one slot free for two.
    for (const retryCount of [0, 2]) {
      const refused = await b!.acquireSemaphore('pair', 3, 10_000, { permits: 2, retryCount, retryDelayMs: 20 }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(LockContendedError);
      // With retries, the last attempt was a read of every slot, which asked for none.
      if (retryCount > 0) expect((refused as Error).message).toMatch(/1 of 3 slots free on a quorum, 2 wanted/);
      // Decided at a quorum: the last cleanups may still be on their way.
      await waitFor(async () => (await slotTokens(b!, 'pair', free)).every((t) => t === null), 2_000, `slot ${free} free again`);
      for (const s of two.slots) expect(await slotTokens(b!, 'pair', s)).toEqual([two.token, two.token, two.token, two.token, two.token]);
    }
    const one = await b!.acquireSemaphore('pair', 3, 10_000, { retryCount: 5, retryDelayMs: 20 });
    expect(one.slots).toEqual([free]);
    await Promise.all([two.release(), one.release()]);
  });

  it("one Redlock's acquires ask first for slots it neither holds nor asks for: a second permit of two, at the first attempt, every time", async () => {
    const [r] = await clients('own-slots', 1);
    for (let i = 0; i < 12; i++) {
      const first = await r!.acquireSemaphore('own', 2, 10_000);
      // retryCount 0: one attempt, no read; a random guess would meet `first` half the time.
      const second = await r!.acquireSemaphore('own', 2, 10_000);
      expect(second.slot).toBe(1 - first.slot);
      await Promise.all([first, second].map(async (p) => (await p.release()).settled));
      // Concurrent acquires of one Redlock ask for different slots too.
      const both = await Promise.all([r!.acquireSemaphore('own', 2, 10_000), r!.acquireSemaphore('own', 2, 10_000)]);
      expect(both.map((p) => p.slot).sort()).toEqual([0, 1]);
      await Promise.all(both.map(async (p) => (await p.release()).settled));
    }
  });

  it('fences are strictly increasing across the grants of each slot, and each is the one its slot key records', async () => {
    const all = await clients('fences', 3);
    const last = new Map<number, number>();
    for (let i = 0; i < 18; i++) {
      const r = all[i % 3]!;
      const permit = await r.acquireSemaphore('fenced', 2, 5_000);
      expect(permit.fence).not.toBeNull();
      const before = last.get(permit.slot);
      if (before !== undefined) expect(permit.fence!).toBeGreaterThan(before);
      last.set(permit.slot, permit.fence!);
      // A fence proposed with the grant is in every key's value at once; one from the fence round
      // after a proposal that did not stand reaches the nodes outside that round a moment later.
      const fence = String(permit.fence);
      await waitFor(async () => (await recordedFences(r, 'fenced', permit.slot)).every((f) => f === fence), 5_000, 'the fence recorded');
      expect(await recordedFences(r, 'fenced', permit.slot)).toEqual(Array(3).fill(fence));
      await (
        await permit.release()
      ).settled;
    }
    expect([...last.keys()].sort()).toEqual([0, 1]);
  });
});

describe('every client must use the same limit', () => {
  it('a holder granted under another limit: SemaphoreLimitMismatchError at once, not retried', async () => {
    const [a, b] = await clients('mismatch', 2);
    const all = await a!.acquireSemaphore('m', 3, 10_000, { permits: 3 });
    const events: OperationEvent[] = [];
    b!.on('acquire', (e) => events.push(e));
    const t0 = performance.now();
    const refused = await b!.acquireSemaphore('m', 2, 10_000, { retryCount: 10, retryDelayMs: 1_000 }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(SemaphoreLimitMismatchError);
    expect(refused).toMatchObject({ recordedLimit: 3, clientLimit: 2 });
    expect(performance.now() - t0).toBeLessThan(900);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ ok: false, attempts: 1 });
    await all.release();
  });

  it('the slot read sees a holder of a slot beyond its limit (a client that counts more)', async () => {
    const [a, b] = await clients('beyond', 2);
    const prefix = a!.settings.keyPrefix;
    // Slots 0 and 1 held by something without metadata (no limit to compare), slot 2 by a client of limit 3.
    for (const c of env.direct) for (const s of [0, 1]) await c.set(`${prefix}sem:r:${s}`, 'foreign-token', 'PX', 30_000);
    let third: Permit | null = null;
    for (let i = 0; i < 20 && third === null; i++) {
      third = await a!.acquireSemaphore('r', 3, 10_000).catch(() => null);
      if (third && third.slot !== 2) throw new Error(`slot ${third.slot} was granted over a foreign key`);
    }
    expect(third?.slot).toBe(2);
    const refused = await b!.acquireSemaphore('r', 2, 10_000, { retryCount: 3, retryDelayMs: 20 }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(SemaphoreLimitMismatchError);
    expect(refused).toMatchObject({ recordedLimit: 3, clientLimit: 2 });
    await third!.release();
  });
});

describe('the limit mismatch the core does not prevent (README, Assumptions, item 11)', () => {
  it("a client of a larger limit whose first guess is a slot past the others' limit is granted it: the next read of a client of the smaller limit reports it", async () => {
    const [a, b, c] = await clients('mismatch-guess', 3);
    // Two holders of a 2-permit semaphore, long granted.
    const full = await a!.acquireSemaphore('g', 2, 10_000, { permits: 2 });
    // B uses limit 3. Its first attempt reads nothing: a guess of slot 0 or 1 meets a holder of
    // limit 2 (the mismatch, reported), a guess of slot 2 is granted: a third holder.
    let third: Permit | null = null;
    for (let i = 0; i < 40 && third === null; i++) {
      const outcome = await b!.acquireSemaphore('g', 3, 10_000).catch((e: unknown) => e);
      if (outcome instanceof Permit) third = outcome;
      else expect(outcome).toMatchObject({ name: 'SemaphoreLimitMismatchError', recordedLimit: 2, clientLimit: 3 });
    }
    expect(third?.slot).toBe(2);
    expect(full.validityMs).toBeGreaterThan(0);
    // Caught afterwards, by the first read of a client of limit 2 (it reads slot `limit` too).
    const refused = await c!.acquireSemaphore('g', 2, 10_000, { retryCount: 2, retryDelayMs: 20 }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ name: 'SemaphoreLimitMismatchError', recordedLimit: 3, clientLimit: 2 });
    await Promise.all([full.release(), third!.release()]);
  });
});

describe('a full semaphore waits like a held mutex', () => {
  it('a waiter is woken by the release of any slot, well before its retry delay', async () => {
    const [a, b] = await clients('wake', 2);
    const held = await a!.acquireSemaphore('w', 2, 10_000, { permits: 2 });
    const waiting = b!.acquireSemaphore('w', 2, 10_000, { retryCount: 3, retryDelayMs: 5_000, retryJitterMs: 0 });
    await waitersAsleep(b!, 1);
    const releasedAt = performance.now();
    await held.release();
    const permit = await waiting;
    const handoff = performance.now() - releasedAt;
    console.log(`handoff from a semaphore release to the waiter's grant: ${handoff.toFixed(1)} ms`);
    expect(handoff).toBeLessThan(2_000);
    await permit.release();
  });

  it('two slots released one after the other wake two waiters of one Redlock, each well before its retry delay', async () => {
    const [a, b] = await clients('wake-two', 2);
    const first = await a!.acquireSemaphore('w2', 2, 10_000);
    const second = await a!.acquireSemaphore('w2', 2, 10_000, { retryCount: 5, retryDelayMs: 20 });
    const slow = { retryCount: 3, retryDelayMs: 10_000, retryJitterMs: 0 };
    // Both wait in one Redlock (one process, one subscription): each freed slot must wake one of them.
    const waiting = [b!.acquireSemaphore('w2', 2, 10_000, slow), b!.acquireSemaphore('w2', 2, 10_000, slow)];
    await waitersAsleep(b!, 2);
    const releasedAt = performance.now();
    await Promise.all([first.release(), second.release()]);
    const permits = await Promise.all(waiting);
    const handoff = performance.now() - releasedAt;
    console.log(`two slots released, two waiters granted in ${handoff.toFixed(1)} ms`);
    expect(handoff).toBeLessThan(5_000);
    expect(new Set(permits.map((p) => p.slot))).toEqual(new Set([0, 1]));
    await Promise.all(permits.map((p) => p.release()));
  });

  it('maxWaitMs bounds the wait (LockContendedError: the semaphore is full), and the signal aborts it', async () => {
    const [a, b] = await clients('bounded', 2);
    const held = await a!.acquireSemaphore('f', 1, 20_000);
    const t0 = performance.now();
    const waited = await b!
      .acquireSemaphore('f', 1, 5_000, { retryCount: 1_000, retryDelayMs: 50, maxWaitMs: 600 })
      .catch((e: unknown) => e);
    const elapsed = performance.now() - t0;
    expect(waited).toBeInstanceOf(LockContendedError);
    expect(elapsed).toBeGreaterThanOrEqual(590);
    expect(elapsed).toBeLessThan(5_000);

    const controller = new AbortController();
    const aborted = b!
      .acquireSemaphore('f', 1, 5_000, { retryCount: 1_000, retryDelayMs: 10_000, signal: controller.signal })
      .catch((e: unknown) => e);
    await waitersAsleep(b!, 1);
    const abortedAt = performance.now();
    controller.abort(new Error('caller gave up'));
    expect(await aborted).toMatchObject({ message: 'caller gave up' });
    expect(performance.now() - abortedAt).toBeLessThan(2_000);
    await held.release();
  });
});

describe("a Redlock's memory of its own slots (slot-claims.ts)", () => {
  it('keeps no permit past its validity: permits of many semaphores left to expire unreleased are collected', async () => {
    const gc = runInNewContext('gc') as () => void;
    const [r] = await clients('claims-leak', 1);
    // A rate limiter's use: a permit per key (here 100 distinct semaphores), never released, left
    // to expire. Nothing of the caller's keeps them: only what the Redlock keeps could.
    const refs: WeakRef<Permit>[] = [];
    let end = 0;
    // In a function of its own, so that no variable of this test keeps the last permit.
    const take = async (i: number) => {
      const permit = await r!.acquireSemaphore(`tenant-${i}`, 2, 300, { fenced: false });
      end = Math.max(end, performance.now() + permit.validityMs);
      refs.push(new WeakRef(permit));
    };
    for (let i = 0; i < 100; i++) await take(i);
    await waitFor(() => performance.now() > end + 5, 5_000, 'every permit past its validity');
    // The Redlock goes on serving other semaphores.
    for (let i = 0; i < 100; i++) await (await r!.acquireSemaphore(`other-${i}`, 2, 5_000, { fenced: false })).release();
    await new Promise((res) => setImmediate(res));
    gc();
    await new Promise((res) => setImmediate(res));
    gc();
    const kept = refs.filter((ref) => ref.deref() !== undefined).length;
    expect(kept, `${kept} of 100 expired permits still referenced`).toBe(0);
  });
});

describe('waiters leave nothing behind', () => {
  it('granted, aborted and timed-out waiters of a semaphore all unregister: the subscriptions close after subscriberLingerMs', async () => {
    const [a, b] = await clients('no-leak', 2, { subscriberLingerMs: 50 });
    const channel = `${b!.settings.keyPrefix}released`;
    const subscribers = async () =>
      (await Promise.all(env.direct.map(async (c) => Number(((await c.pubsub('NUMSUB', channel)) as unknown[])[1])))).reduce(
        (x, y) => x + y,
        0,
      );
    const held = await a!.acquireSemaphore('leak', 2, 10_000, { permits: 2 });
    const slow = { retryCount: 50, retryDelayMs: 5_000, retryJitterMs: 0 };
    const controller = new AbortController();
    const granted = b!.acquireSemaphore('leak', 2, 10_000, slow);
    const aborted = b!.acquireSemaphore('leak', 2, 10_000, { ...slow, signal: controller.signal }).catch((e: unknown) => e);
    const timedOut = b!.acquireSemaphore('leak', 2, 10_000, { ...slow, permits: 2, maxWaitMs: 300 }).catch((e: unknown) => e);
    // Waiting: B subscribed on the nodes.
    await waitFor(async () => (await subscribers()) > 0, 5_000, "B's subscriptions");
    expect(await timedOut).toBeInstanceOf(LockContendedError);
    controller.abort(new Error('gave up'));
    expect(await aborted).toMatchObject({ message: 'gave up' });
    await held.release();
    const permit = await granted;
    await permit.release();
    // No waiter left registered: the subscriptions close once the linger is over.
    await waitFor(async () => (await subscribers()) === 0, 5_000, "B's subscriptions to close");
  });
});

describe('usingSemaphore', () => {
  it('extends the permit while the routine runs, releases it after, and aborts the routine when the permit is lost', async () => {
    const [r] = await clients('using', 1, { automaticExtensionThresholdMs: 300 });
    const kept = await r!.usingSemaphore('u', 2, 700, async (signal, permit) => {
      await sleep(1_200); // work: the routine outlasts the 700 ms lease, so it must be extended
      expect(signal.aborted).toBe(false);
      return permit;
    });
    expect(kept.extensions).toBeGreaterThanOrEqual(1);
    expect(kept.released).toBe(true);
    expect(await keysOf(r!)).toEqual([]);

    const lost: unknown[] = [];
    r!.on('lock-lost', (e) => lost.push(e.lock));
    let seen: Permit | null = null;
    const reason = await r!.usingSemaphore('u', 2, 1_000, async (signal, permit) => {
      seen = permit;
      // Someone deletes the slot everywhere: the next extension finds it gone.
      for (const c of env.direct) await c.del(permit.keys[0]!);
      await new Promise((res) => signal.addEventListener('abort', res, { once: true }));
      return signal.reason as unknown;
    });
    expect(reason).toBeInstanceOf(LockExpiredError);
    expect(lost).toEqual([seen]);
  });

  it('no unhandled rejections happened in this file', () => {
    expect(unhandled).toEqual([]);
  });
});
