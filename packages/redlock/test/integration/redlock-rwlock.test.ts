import { describe, expect, it } from 'vitest';
import {
  InvalidArgumentError,
  LockContendedError,
  LockExpiredError,
  metaTextOf,
  Redlock,
  RwLock,
  SemaphoreLimitMismatchError,
  tokenOf,
  type RedlockSettings,
} from '@redlock-console/redlock';
import { uniquePrefix, waitFor } from '@/test/support/cluster';
import { redlockEnv } from '@/test/support/redlock-env';
import { waitersAsleep } from '@/test/support/waiters';

// The read-write lock on five real masters: a reader is a mutex grant of one reader slot, a writer
// one grant of every slot (src/rwlock.ts), so these tests look at who holds what at once.

const env = redlockEnv();
const { redlocks, unhandled } = env;
const sleep = (ms: number) => new Promise((res) => setTimeout(res, ms));

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

/** Every key under the prefix, on every node (the sentinel and anchor excepted). */
const keysOf = async (r: Redlock) =>
  (await Promise.all(env.direct.map((c) => c.keys(`${r.settings.keyPrefix}*`))))
    .flat()
    .filter((k) => !k.endsWith('epoch') && !k.endsWith('anchor'))
    .sort();

/** The token each node's intent key of `resource` holds (null where absent). */
const intentTokens = (r: Redlock, resource: string) =>
  Promise.all(
    env.direct.map(async (c) => {
      const value = await c.get(`${r.settings.keyPrefix}rw:${resource}:intent`);
      return value === null ? null : tokenOf(value);
    }),
  );

describe('readers share, a writer excludes', () => {
  it('two readers hold at once on two slots; a writer is refused while they hold and granted, fenced, once they release; readers and writers are refused while it holds', async () => {
    const [a, b, c] = await clients('basic', 3);
    const r1 = await a!.acquireRead('doc', 5_000, { maxReaders: 4, metadata: { purpose: 'report' } });
    const r2 = await b!.acquireRead('doc', 5_000, { maxReaders: 4 });
    expect(r1).toBeInstanceOf(RwLock);
    expect(r1.mode).toBe('read');
    expect(r1.maxReaders).toBe(4);
    expect(r1.slots).toHaveLength(1);
    expect(r1.resources).toEqual([`rw:doc:${r1.slots[0]}`]);
    expect(r2.slots[0]).not.toBe(r1.slots[0]);
    expect(r1.validityMs).toBeGreaterThan(0);
    expect(r2.validityMs).toBeGreaterThan(0);
    const key = `${a!.settings.keyPrefix}rw:doc:${r1.slots[0]}`;
    const meta = JSON.parse(metaTextOf((await env.direct[0]!.get(key))!)!) as Record<string, string>;
    expect(meta).toMatchObject({ limit: '4', rw: 'read', purpose: 'report' });
    expect(r1.toJSON()).toMatchObject({ resource: 'doc', mode: 'read', maxReaders: 4, slots: r1.slots });

    const refused = await c!.acquireWrite('doc', 5_000, { maxReaders: 4 }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(LockContendedError);
    // The refused writer left nothing of its attempt: only the readers' slots remain (5 nodes each).
    await waitFor(async () => (await keysOf(a!)).length === 10, 5_000, 'only the readers keys');

    await Promise.all([(await r1.release()).settled, (await r2.release()).settled]);
    const w = await c!.acquireWrite('doc', 5_000, { maxReaders: 4 });
    expect(w.mode).toBe('write');
    expect(w.slots).toEqual([0, 1, 2, 3]);
    expect(w.resources).toEqual(['rw:doc:0', 'rw:doc:1', 'rw:doc:2', 'rw:doc:3']);
    expect(w.fence).toBeGreaterThan(r1.fence!);
    expect(w.fence).toBeGreaterThan(r2.fence!);
    await expect(a!.acquireRead('doc', 5_000, { maxReaders: 4 })).rejects.toBeInstanceOf(LockContendedError);
    await expect(b!.acquireWrite('doc', 5_000, { maxReaders: 4 })).rejects.toBeInstanceOf(LockContendedError);

    const extended = await w.extend(8_000);
    expect(extended).toBe(w);
    expect(w.validityMs).toBeGreaterThan(6_000);
    await (
      await w.release()
    ).settled;
    expect(await keysOf(a!)).toEqual([]);
    await expect(w.extend(1_000)).rejects.toBeInstanceOf(LockExpiredError);
    const after = await a!.acquireRead('doc', 5_000, { maxReaders: 4 });
    expect(after.fence).toBeGreaterThan(w.fence!);
    await after.release();
  });

  it('maxReaders readers at most: one more is refused until one leaves', async () => {
    const [a] = await clients('full', 1);
    const held = await Promise.all([0, 1].map(() => a!.acquireRead('two', 5_000, { maxReaders: 2, retryCount: 20, retryDelayMs: 50 })));
    expect(new Set(held.map((l) => l.slots[0]))).toEqual(new Set([0, 1]));
    await expect(a!.acquireRead('two', 5_000, { maxReaders: 2 })).rejects.toBeInstanceOf(LockContendedError);
    await held[0]!.release();
    const third = await a!.acquireRead('two', 5_000, { maxReaders: 2 });
    expect(third.slots).toEqual(held[0]!.slots);
    await Promise.all([held[1]!.release(), third.release()]);
  });

  it('bad input is refused with InvalidArgumentError before any traffic', async () => {
    const [r] = await clients('invalid', 1);
    const bad: Array<[unknown, unknown, unknown, string]> = [
      [['a'], 1_000, {}, 'resource'],
      ['', 1_000, {}, 'resource'],
      ['x'.repeat(513), 1_000, {}, 'resource'],
      ['\uD800', 1_000, {}, 'resource'],
      ['r', 1_000, { maxReaders: 0 }, 'maxReaders'],
      ['r', 1_000, { maxReaders: 65 }, 'maxReaders'],
      ['r', 1_000, { maxReaders: 2.5 }, 'maxReaders'],
      ['r', 1_000, { maxReaders: '4' }, 'maxReaders'],
      ['r', 0, {}, 'ttlMs'],
      ['r', 120_000, {}, 'ttlMs'],
      ['r', 1_000, { fenced: 'yes' }, 'fenced'],
      ['r', 1_000, { metadata: { limit: '9' } }, 'metadata.limit'],
      ['r', 1_000, { metadata: { rw: 'write' } }, 'metadata.rw'],
      ['r', 1_000, { metadata: { fence: '1' } }, 'metadata.fence'],
      ['r', 1_000, { retryCount: -1 }, 'retryCount'],
      ['r', 1_000, { maxWaitMs: -5 }, 'maxWaitMs'],
      ['r', 1_000, { signal: 'no' }, 'signal'],
      ['r', 1_000, null, 'options'],
    ];
    for (const [resource, ttl, options, argument] of bad) {
      for (const call of [
        () => r!.acquireRead(resource as string, ttl as number, options as object),
        () => r!.acquireWrite(resource as string, ttl as number, options as object),
      ]) {
        await expect(call(), `${argument}: ${JSON.stringify([resource, ttl, options])}`).rejects.toMatchObject({
          name: 'InvalidArgumentError',
          argument,
        });
      }
    }
    await expect(r!.usingRead('r', 1_000, 'no' as never)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(r!.usingWrite('r', 1_000, 'no' as never)).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(await keysOf(r!)).toEqual([]);
  });
});

describe('never a writer with a reader, nor two writers', () => {
  // Separate Redlocks (10 processes), and one Redlock with 10 acquirers at once (a server).
  for (const shared of [false, true]) {
    it(`10 ${shared ? 'acquirers in one Redlock' : 'clients'}, 3 of them writers, 5 rounds each: no overlap of a writer with anyone within validity, writers' fences increasing`, async () => {
      const made = await clients(shared ? 'crowd-shared' : 'crowd', shared ? 1 : 10);
      const all = shared ? Array<Redlock>(10).fill(made[0]!) : made;
      // Each hold, recorded from its grant until just before its release, on this process's monotonic clock.
      const holds: Array<{ who: number; mode: 'read' | 'write'; from: number; to: number; fence: number }> = [];
      const problems: string[] = [];
      let readersNow = 0;
      let writersNow = 0;
      let mostReaders = 0;
      const opts = { maxReaders: 4, retryCount: 500, retryDelayMs: 100, retryJitterMs: 50 };
      await Promise.all(
        all.map(async (r, k) => {
          const writer = k % 3 === 0 && k < 9;
          for (let round = 0; round < 5; round++) {
            const lock = writer ? await r.acquireWrite('crowd', 10_000, opts) : await r.acquireRead('crowd', 10_000, opts);
            const from = performance.now();
            if (writer) {
              if (writersNow > 0 || readersNow > 0) problems.push(`writer ${k} granted with ${writersNow} writers, ${readersNow} readers`);
              writersNow++;
            } else {
              if (writersNow > 0) problems.push(`reader ${k} granted while a writer holds`);
              readersNow++;
              mostReaders = Math.max(mostReaders, readersNow);
            }
            await sleep(5 + Math.random() * 20); // work: the holder uses its lock a while
            if (lock.validityMs <= 0) problems.push(`client ${k} outlived its validity`);
            if (writer) writersNow--;
            else readersNow--;
            holds.push({ who: k, mode: lock.mode, from, to: performance.now(), fence: lock.fence! });
            await lock.release();
          }
        }),
      );
      expect(problems).toEqual([]);
      const writes = holds.filter((h) => h.mode === 'write').sort((x, y) => x.from - y.from);
      for (const w of writes) {
        for (const other of holds) {
          if (other === w) continue;
          if (other.from < w.to && w.from < other.to) problems.push(`writer ${w.who} overlaps ${other.mode}er ${other.who}`);
        }
      }
      for (let i = 1; i < writes.length; i++)
        if (!(writes[i]!.fence > writes[i - 1]!.fence)) problems.push(`writer fence ${writes[i]!.fence} after ${writes[i - 1]!.fence}`);
      expect(problems).toEqual([]);
      expect(writes).toHaveLength(15);
      // Readers did share the lock.
      expect(mostReaders).toBeGreaterThan(1);
      console.log(`rw crowd (${shared ? 'one Redlock' : '10 Redlocks'}): 15 writes, 35 reads, at most ${mostReaders} readers at once`);
    }, 180_000);
  }

  it('every client must use the same maxReaders: a holder granted under another is reported, not retried', async () => {
    const [a, b] = await clients('mismatch', 2);
    const reader = await a!.acquireRead('m', 5_000, { maxReaders: 4 });
    const attempts: number[] = [];
    b!.on('acquire', (e) => attempts.push(e.attempts));
    const asReader = await b!.acquireRead('m', 5_000, { maxReaders: 8, retryCount: 5 }).catch((e: unknown) => e);
    expect(asReader).toBeInstanceOf(SemaphoreLimitMismatchError);
    expect(asReader).toMatchObject({ recordedLimit: 4, clientLimit: 8 });
    const asWriter = await b!.acquireWrite('m', 5_000, { maxReaders: 8, retryCount: 5 }).catch((e: unknown) => e);
    expect(asWriter).toMatchObject({ name: 'SemaphoreLimitMismatchError', recordedLimit: 4, clientLimit: 8 });
    expect(attempts).toEqual([1, 1]);
    await reader.release();
  });
});

describe('the maxReaders mismatch the core does not prevent (README, Assumptions, item 12)', () => {
  it('a writer of a smaller maxReaders, granted at its first attempt, does not see a reader in a slot above its own: the next read of a client of the larger one reports it', async () => {
    const [a, b] = await clients('mismatch-hole', 2);
    // A's readers fill the 4 slots; the one in slot 3 stays, the others leave.
    const fill = [];
    for (let i = 0; i < 4; i++) fill.push(await a!.acquireRead('hole', 10_000, { maxReaders: 4 }));
    const high = fill.find((l) => l.slots[0] === 3)!;
    expect(high).toBeDefined();
    await Promise.all(fill.filter((l) => l !== high).map(async (l) => (await l.release()).settled));
    // B thinks the lock has 2 slots: its writer takes 0 and 1 and is granted beside A's reader.
    const writer = await b!.acquireWrite('hole', 10_000, { maxReaders: 2 });
    expect(writer.validityMs).toBeGreaterThan(0);
    expect(high.validityMs).toBeGreaterThan(0);
    // A client of 4 slots reads the writer's slots, which record 2.
    const seen = await a!.acquireRead('hole', 10_000, { maxReaders: 4 }).catch((e: unknown) => e);
    expect(seen).toMatchObject({ name: 'SemaphoreLimitMismatchError', recordedLimit: 2, clientLimit: 4 });
    await Promise.all([writer.release(), high.release()]);
  });
});

describe('writers are not starved', () => {
  it('a writer waiting behind a stream of overlapping readers is granted within a bounded wait; new readers wait behind its intent', async () => {
    const [w, ...readers] = await clients('starve', 7);
    const opts = { maxReaders: 8, retryCount: 10_000, retryDelayMs: 20, retryJitterMs: 10 };
    let stop = false;
    let reads = 0;
    let readsDuringWrite = 0;
    let writing = false;
    // Six readers, each holding 300 ms and coming back at once, staggered by 50 ms: at every moment
    // five of them or more hold, so the slots are never all free unless new readers stay away.
    const streams = readers.map(async (r, k) => {
      await sleep(k * 50); // pace: the stagger is the scenario
      while (!stop) {
        const lock = await r!.acquireRead('hot', 5_000, opts);
        reads++;
        if (writing) readsDuringWrite++;
        await sleep(300); // work: the reader's hold
        await lock.release();
      }
    });
    await waitFor(() => reads >= 12, 10_000, 'the reader stream under way');
    const t0 = performance.now();
    const lock = await w!.acquireWrite('hot', 5_000, { ...opts, maxWaitMs: 8_000 });
    writing = true;
    const waited = performance.now() - t0;
    await sleep(100); // work: the writer's hold, while readers keep trying
    writing = false;
    await lock.release();
    stop = true;
    await Promise.all(streams);
    console.log(`writer granted after ${waited.toFixed(0)} ms behind a stream of six readers holding 300 ms each`);
    expect(readsDuringWrite).toBe(0);
    // The readers that held when its intent landed leave within their 300 ms holds: well under a second on a quiet machine.
    expect(waited).toBeLessThan(4_000);
    // The intent went with the grant.
    expect(await intentTokens(w!, 'hot')).toEqual([null, null, null, null, null]);
  }, 60_000);

  it("a reader that holds while a writer waits keeps its lock, extends it, and the writer is granted when it releases; the writer's intent is on a quorum meanwhile", async () => {
    const [a, b, c] = await clients('hold', 3);
    const held = await a!.acquireRead('h', 5_000, { maxReaders: 2 });
    const waiting = b!.acquireWrite('h', 5_000, { maxReaders: 2, retryCount: 100, retryDelayMs: 50 });
    await waitFor(async () => (await intentTokens(b!, 'h')).filter((t) => t !== null).length >= 3, 5_000, "the writer's intent");
    // A new reader is refused (a writer waits), though a slot is free.
    const refused = await c!.acquireRead('h', 5_000, { maxReaders: 2 }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(LockContendedError);
    expect((refused as Error).message).toMatch(/a writer waits/);
    // The holder is not revoked: it extends.
    await held.extend(5_000);
    expect(held.validityMs).toBeGreaterThan(3_000);
    await held.release();
    const w = await waiting;
    expect(w.mode).toBe('write');
    expect(await intentTokens(b!, 'h')).toEqual([null, null, null, null, null]);
    await w.release();
    await (await c!.acquireRead('h', 5_000, { maxReaders: 2 })).release();
  });
});

describe("a writer's intent outlives no dead writer", () => {
  it('a writer that dies while it waits (its Redlock closed: nothing withdraws the intent) holds readers back until its intent expires, one ttl', async () => {
    const [a, b, c] = await clients('dead-writer', 3, { maxTtlMs: 30_000 });
    const reader = await a!.acquireRead('d', 20_000, { maxReaders: 2 });
    const dying = b!.acquireWrite('d', 1_500, { maxReaders: 2, retryCount: 100, retryDelayMs: 10_000 }).catch((e: unknown) => e);
    await waitersAsleep(b!, 1);
    expect((await intentTokens(b!, 'd')).filter((t) => t !== null).length).toBeGreaterThanOrEqual(3);
    await b!.quit();
    expect(await dying).toMatchObject({ name: 'QuorumUnavailableError' });
    const diedAt = performance.now();
    // The intent stands: a new reader is refused.
    await expect(c!.acquireRead('d', 5_000, { maxReaders: 2 })).rejects.toThrow(/a writer waits/);
    // It expires on its own: a reader waiting for it is granted within a ttl or so.
    const next = await c!.acquireRead('d', 5_000, { maxReaders: 2, retryCount: 100, retryDelayMs: 100 });
    const waited = performance.now() - diedAt;
    console.log(`readers held back ${waited.toFixed(0)} ms by a dead writer's intent (its ttl 1.5 s)`);
    expect(waited).toBeLessThan(5_000);
    await Promise.all([next.release(), reader.release()]);
  });
});

describe('waiting: wake-up, bounds, abort', () => {
  it("a waiting writer is woken by a reader's release, and a waiting reader by the writer's, well before their retry delays", async () => {
    const [a, b] = await clients('wake', 2);
    const slow = { maxReaders: 3, retryCount: 3, retryDelayMs: 5_000, retryJitterMs: 0 };
    const reader = await a!.acquireRead('w', 10_000, { maxReaders: 3 });
    const writing = b!.acquireWrite('w', 10_000, slow);
    await waitersAsleep(b!, 1);
    let releasedAt = performance.now();
    await reader.release();
    const w = await writing;
    const toWriter = performance.now() - releasedAt;

    const reading = a!.acquireRead('w', 10_000, slow);
    await waitersAsleep(a!, 1);
    releasedAt = performance.now();
    await w.release();
    const r = await reading;
    const toReader = performance.now() - releasedAt;
    console.log(`handoff reader → writer ${toWriter.toFixed(1)} ms, writer → reader ${toReader.toFixed(1)} ms (retry delay 5 s)`);
    expect(toWriter).toBeLessThan(2_500);
    expect(toReader).toBeLessThan(2_500);
    await r.release();
  });

  it('retries are bounded (LockContendedError after retryCount sleeps), maxWaitMs bounds the wait, and the signal aborts it; a writer that gives up leaves no intent', async () => {
    const [a, b] = await clients('bounded', 2);
    const held = await a!.acquireRead('b', 20_000, { maxReaders: 2 });
    const attempts: number[] = [];
    b!.on('acquire', (e) => attempts.push(e.attempts));
    const t0 = performance.now();
    const refused = await b!
      .acquireWrite('b', 5_000, { maxReaders: 2, retryCount: 3, retryDelayMs: 50, retryJitterMs: 0 })
      .catch((e: unknown) => e);
    const elapsed = performance.now() - t0;
    expect(refused).toBeInstanceOf(LockContendedError);
    // 1 + retryCount, and the free retries a wake-up gives (the subscriptions coming up wake every waiter once).
    expect(attempts[0]).toBeGreaterThanOrEqual(4);
    expect(attempts[0]).toBeLessThanOrEqual(6);
    expect(elapsed).toBeGreaterThanOrEqual(145);
    expect(await intentTokens(b!, 'b')).toEqual([null, null, null, null, null]);

    const t1 = performance.now();
    const waited = await b!
      .acquireWrite('b', 5_000, { maxReaders: 2, retryCount: 1_000, retryDelayMs: 50, maxWaitMs: 600 })
      .catch((e: unknown) => e);
    expect(waited).toBeInstanceOf(LockContendedError);
    expect(performance.now() - t1).toBeGreaterThanOrEqual(590);
    expect(await intentTokens(b!, 'b')).toEqual([null, null, null, null, null]);

    const controller = new AbortController();
    const aborted = b!
      .acquireWrite('b', 5_000, { maxReaders: 2, retryCount: 1_000, retryDelayMs: 10_000, signal: controller.signal })
      .catch((e: unknown) => e);
    await waitersAsleep(b!, 1);
    // Asleep after a contended attempt: its intent is there.
    expect((await intentTokens(b!, 'b')).filter((t) => t !== null).length).toBeGreaterThanOrEqual(3);
    const abortedAt = performance.now();
    controller.abort(new Error('caller gave up'));
    expect(await aborted).toMatchObject({ message: 'caller gave up' });
    expect(performance.now() - abortedAt).toBeLessThan(3_000);
    expect(await intentTokens(b!, 'b')).toEqual([null, null, null, null, null]);
    await held.release();
    // With the intent gone, readers go on.
    await (await a!.acquireRead('b', 5_000, { maxReaders: 2 })).release();
  });
});

describe('usingRead / usingWrite', () => {
  it('extend the lock while the routine runs, release it after, and abort the routine when the lock is lost', async () => {
    const [r] = await clients('using', 1, { automaticExtensionThresholdMs: 300 });
    const kept = await r!.usingWrite(
      'u',
      700,
      async (signal, lock) => {
        await sleep(1_200); // work: the routine outlasts the 700 ms lease, so it must be extended
        expect(signal.aborted).toBe(false);
        return lock;
      },
      { maxReaders: 2 },
    );
    expect(kept.mode).toBe('write');
    expect(kept.extensions).toBeGreaterThanOrEqual(1);
    expect(kept.released).toBe(true);
    expect(await keysOf(r!)).toEqual([]);

    const lost: unknown[] = [];
    r!.on('lock-lost', (e) => lost.push(e.lock));
    let seen: RwLock | null = null;
    const reason = await r!.usingRead('u', 1_000, async (signal, lock) => {
      seen = lock;
      // Someone deletes the slot everywhere: the next extension finds it gone.
      for (const c of env.direct) await c.del(lock.keys[0]!);
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
