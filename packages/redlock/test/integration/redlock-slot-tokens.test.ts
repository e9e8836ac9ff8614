import { describe, expect, it } from 'vitest';
import {
  InvalidArgumentError,
  LockContendedError,
  LockExpiredError,
  Redlock,
  tokenOf,
  type RedlockSettings,
} from '@redlock-console/redlock';
import { uniquePrefix } from '@/test/support/cluster';
import { redlockEnv } from '@/test/support/redlock-env';
import { waitersAsleep } from '@/test/support/waiters';

// A permit and a read or write lock known only by their token and slots (the HTTP lock service
// keeps no handle): extendPermitToken / releasePermitToken / extendRwToken / releaseRwToken on
// five real masters. src/slot-tokens.ts argues why exclusion and fence order hold; these tests
// check what each call does to the slot keys and to the next holder.

const env = redlockEnv();
const { redlocks } = env;

function client(prefix: string, settings: Partial<RedlockSettings> = {}): Redlock {
  const r = new Redlock(env.cluster.urls, { keyPrefix: prefix, retryCount: 0, nodeTimeoutMs: 1_000, ...settings });
  redlocks.push(r);
  return r;
}

async function pair(name: string): Promise<[Redlock, Redlock]> {
  const prefix = uniquePrefix(name);
  const a = client(prefix);
  const b = client(prefix);
  await a.markNodesClean();
  return [a, b];
}

/** The token each node's key holds (null where absent). */
const tokens = (key: string) =>
  Promise.all(
    env.direct.map(async (c) => {
      const v = await c.get(key);
      return v === null ? null : tokenOf(v);
    }),
  );

describe('a semaphore permit by token and slots', () => {
  it('extends its slot keys and releases them; another client (the service restarted) then takes the slot with a higher fence', async () => {
    const [service, other] = await pair('permit-token');
    const permit = await service.acquireSemaphore('jobs', 1, 2_000, { permits: 1 });
    const key = `${service.settings.keyPrefix}sem:jobs:0`;
    // Extended by token from a Redlock that never saw the permit: every slot key lives longer.
    const extended = await other.extendPermitToken('jobs', [0], permit.token, 6_000);
    expect(extended.resources).toEqual(['sem:jobs:0']);
    expect(extended.validityMs).toBeGreaterThan(5_000);
    const pttls = await Promise.all(env.direct.map((c) => c.pttl(key)));
    expect(pttls.filter((p) => p > 5_000).length).toBeGreaterThanOrEqual(3);
    // The slot is still the permit's: the limit of 1 is reached.
    await expect(other.acquireSemaphore('jobs', 1, 1_000)).rejects.toBeInstanceOf(LockContendedError);

    const released = await (await other.releasePermitToken('jobs', [0], permit.token)).settled;
    expect(released.deleted).toBe(5);
    expect(await tokens(key)).toEqual([null, null, null, null, null]);
    const next = await other.acquireSemaphore('jobs', 1, 1_000);
    expect(next.slots).toEqual([0]);
    expect(next.fence).toBeGreaterThan(permit.fence!);
    await next.release();
  });

  it('a wrong token or slots another permit holds: the release deletes nothing and the extend fails, the holder keeps its slot', async () => {
    const [a, b] = await pair('permit-wrong');
    const mine = await a.acquireSemaphore('pool', 2, 3_000, { permits: 1 });
    // A few quick retries: b's slot read is decided at a quorum, and one that missed a's key on a
    // node still to answer asks for a's slot and is refused (seen once in a full run); the next attempt reads again.
    const theirs = await b.acquireSemaphore('pool', 2, 3_000, { permits: 1, retryCount: 5, retryDelayMs: 50, retryJitterMs: 0 });
    expect(mine.slot).not.toBe(theirs.slot);
    const theirKey = `${a.settings.keyPrefix}sem:pool:${theirs.slot}`;
    // My token on their slot: compare-and-delete finds another token.
    const wrongSlot = await (await a.releasePermitToken('pool', [theirs.slot], mine.token)).settled;
    expect(wrongSlot.deleted).toBe(0);
    const wrongToken = await (await a.releasePermitToken('pool', [theirs.slot], 'not-the-token')).settled;
    expect(wrongToken.deleted).toBe(0);
    expect(await tokens(theirKey)).toEqual(Array(5).fill(theirs.token));
    await expect(a.extendPermitToken('pool', [theirs.slot], mine.token, 5_000)).rejects.toBeInstanceOf(LockExpiredError);
    // PEXPIRE GT was never sent to their key with my token: its ttl is its own.
    for (const c of env.direct) expect(await c.pttl(theirKey)).toBeLessThanOrEqual(3_000);
    await Promise.all([mine.release(), theirs.release()]);
  });

  it('a release by token wakes a waiting acquire at once', async () => {
    const [a, b] = await pair('permit-wake');
    const held = await a.acquireSemaphore('one', 1, 20_000);
    const waiting = b.acquireSemaphore('one', 1, 2_000, { retryCount: 1_000, retryDelayMs: 5_000, retryJitterMs: 0, maxWaitMs: 15_000 });
    // The waiter made its first, refused, attempt and sleeps (5 s between attempts): only the release's message wakes it.
    await waitersAsleep(b, 1);
    const started = performance.now();
    await a.releasePermitToken('one', [0], held.token);
    const granted = await waiting;
    // Woken by the release's publish, not by its next scheduled attempt 5 s later.
    expect(performance.now() - started).toBeLessThan(4_000);
    await granted.release();
  });

  it('bad slots are refused with InvalidArgumentError before any traffic', async () => {
    const [a] = await pair('permit-invalid');
    for (const slots of [[], [-1], [1.5], [256], [1, 1], 'x', Array.from({ length: 65 }, (_, i) => i)])
      await expect(a.releasePermitToken('s', slots as number[], 't')).rejects.toMatchObject({
        name: 'InvalidArgumentError',
        argument: 'slots',
      });
    await expect(a.extendPermitToken('', [0], 't', 1_000)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(a.extendRwToken('s', [64], 't', 1_000)).rejects.toMatchObject({ argument: 'slots' });
    await expect(a.extendPermitToken('s', [0], 'a b', 1_000)).rejects.toMatchObject({ argument: 'token' });
  });
});

describe('a read or write lock by token and slots', () => {
  it("a writer's release by token lets a reader in; a reader's extend by token keeps its slot and shuts the writer out", async () => {
    const [a, b] = await pair('rw-token');
    const writer = await a.acquireWrite('doc', 3_000, { maxReaders: 4 });
    await expect(b.acquireRead('doc', 1_000, { maxReaders: 4 })).rejects.toBeInstanceOf(LockContendedError);
    const released = await (await b.releaseRwToken('doc', writer.slots, writer.token)).settled;
    expect(released.deleted).toBe(5);
    const reader = await b.acquireRead('doc', 1_500, { maxReaders: 4 });
    expect(reader.fence).toBeGreaterThan(writer.fence!);
    const extended = await a.extendRwToken('doc', reader.slots, reader.token, 6_000);
    expect(extended.resources).toEqual([`rw:doc:${reader.slots[0]}`]);
    // Past the reader's own ttl (1.5 s) the writer is still refused: the extend by token held.
    // absence: 2 s, past the reader's first 1.5 s lease (nothing may free the slots in that window)
    await new Promise((r) => setTimeout(r, 2_000));
    await expect(a.acquireWrite('doc', 1_000, { maxReaders: 4 })).rejects.toBeInstanceOf(LockContendedError);
    // A wrong token deletes nothing, the intent key is no slot and is never named.
    expect((await (await a.releaseRwToken('doc', reader.slots, writer.token)).settled).deleted).toBe(0);
    expect((await (await a.releaseRwToken('doc', reader.slots, reader.token)).settled).deleted).toBe(5);
    const second = await a.acquireWrite('doc', 1_000, { maxReaders: 4 });
    expect(second.fence).toBeGreaterThan(reader.fence!);
    await second.release();
  });
});
