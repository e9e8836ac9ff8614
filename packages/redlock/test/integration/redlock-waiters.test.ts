import { describe, expect, it } from 'vitest';
import {
  InvalidArgumentError,
  LockContendedError,
  QuorumUnavailableError,
  Redlock,
  tokenOf,
  type RedlockSettings,
} from '@redlock-console/redlock';
import { uniquePrefix, waitFor } from '@/test/support/cluster';
import { redlockEnv } from '@/test/support/redlock-env';
import { waitersAsleep } from '@/test/support/waiters';

const env = redlockEnv();
const { redlocks, unhandled } = env;
const sleep = (ms: number) => new Promise((res) => setTimeout(res, ms));

async function pair(name: string, settings: Partial<RedlockSettings> = {}): Promise<[Redlock, Redlock]> {
  const prefix = uniquePrefix(name);
  const a = new Redlock(env.cluster.urls, { keyPrefix: prefix, retryCount: 0, ...settings });
  const b = new Redlock(env.cluster.urls, { keyPrefix: prefix, retryCount: 0, ...settings });
  redlocks.push(a, b);
  await a.markNodesClean();
  return [a, b];
}

const subscribers = async (r: Redlock) => {
  const counts = await Promise.all(env.direct.map((c) => c.pubsub('NUMSUB', r.systemKeys.channel) as Promise<[string, number]>));
  return counts.reduce((sum, [, n]) => sum + Number(n), 0);
};

describe('waiters are woken by releases (pub/sub on <prefix>released)', () => {
  it('a waiter acquires within a few ms of the release, well before its 2 s retry delay', async () => {
    const [a, b] = await pair('handoff');
    const held = await a.acquire('res', 10_000);
    const t0 = performance.now();
    const waiting = b.acquire('res', 5_000, { retryCount: 5, retryDelayMs: 2_000, retryJitterMs: 0 });
    await waitersAsleep(b);
    const releasedAt = performance.now();
    await held.release();
    const lock = await waiting;
    const handoff = performance.now() - releasedAt;
    console.log(`handoff from release to the waiter's grant: ${handoff.toFixed(1)} ms`);
    expect(handoff).toBeLessThan(250);
    expect(performance.now() - t0).toBeLessThan(1_000);
    await lock.release();
  });

  it('a chain of ten waiters is served one after another without sleeping out their delays', async () => {
    const [a] = await pair('chain', { nodeTimeoutMs: 1_000 });
    // What is measured is the wake-ups, not the node deadline: a loaded machine (CI) must not time the
    // eleven clients' first round out at the default 100 ms (one run saw 5 of 5 nodes time out).
    const clients = Array.from(
      { length: 10 },
      () => new Redlock(env.cluster.urls, { keyPrefix: a.settings.keyPrefix, nodeTimeoutMs: 1_000 }),
    );
    redlocks.push(...clients);
    const first = await a.acquire('res', 10_000);
    let holder: number | null = null;
    const order: number[] = [];
    const runs = clients.map(async (c, k) => {
      // A 20 s retry delay: a waiter that slept it out instead of being woken would make the first
      // handoff alone take twice the bound below, which load cannot reach (ten woken handoffs took
      // 3.4–4.6 s at load 15, past the old 1.5 s bound with a 2 s delay).
      const lock = await c.acquire('res', 10_000, { retryCount: 20, retryDelayMs: 20_000, retryJitterMs: 0 });
      expect(holder).toBeNull();
      holder = k;
      order.push(k);
      // work: the holder's work
      await sleep(5);
      holder = null;
      await lock.release();
    });
    for (const c of clients) await waitersAsleep(c);
    const t0 = performance.now();
    await first.release();
    await Promise.all(runs);
    const elapsed = performance.now() - t0;
    console.log(`ten handoffs in ${elapsed.toFixed(0)} ms`);
    expect(order).toHaveLength(10);
    expect(elapsed).toBeLessThan(10_000);
  });

  it('subscribes only while someone waits', async () => {
    const [a, b] = await pair('lifetime', { subscriberLingerMs: 50 });
    const held = await a.acquire('res', 5_000);
    expect(await subscribers(b)).toBe(0);
    const waiting = b.acquire('res', 5_000, { retryCount: 3, retryDelayMs: 1_000 });
    await waitFor(async () => (await subscribers(b)) === 5, 2_000, 'one subscriber per node');
    await held.release();
    await (await waiting).release();
    await waitFor(async () => (await subscribers(b)) === 0, 2_000, 'subscribers closed after the linger');
  });

  it('the signal cancels waiting with its reason, at once', async () => {
    const [a, b] = await pair('abort');
    const held = await a.acquire('res', 5_000);
    const controller = new AbortController();
    const waiting = b.acquire('res', 1_000, { retryCount: 50, retryDelayMs: 1_000, signal: controller.signal });
    await waitersAsleep(b); // waiting when it is aborted
    const t0 = performance.now();
    controller.abort();
    const err = await waiting.catch((e: unknown) => e);
    expect(performance.now() - t0).toBeLessThan(100);
    expect(err).toMatchObject({ name: 'AbortError' });

    const custom = new Error('the HTTP client went away');
    const again = new AbortController();
    const second = b.acquire('res', 1_000, { retryCount: 50, retryDelayMs: 1_000, signal: again.signal });
    await waitersAsleep(b);
    again.abort(custom);
    await expect(second).rejects.toBe(custom);
    // An already-aborted signal rejects before any traffic.
    await expect(b.acquire('res', 1_000, { signal: AbortSignal.abort(custom) })).rejects.toBe(custom);
    await held.release();
  });

  it('retries are bounded: a held lock ends in LockContendedError after about retryCount delays', async () => {
    const [a, b] = await pair('bounded');
    const held = await a.acquire('res', 5_000);
    const t0 = performance.now();
    const events: number[] = [];
    b.on('acquire', (e) => events.push(e.attempts));
    const err = await b.acquire('res', 1_000, { retryCount: 3, retryDelayMs: 100, retryJitterMs: 20 }).catch((e: unknown) => e);
    const elapsed = performance.now() - t0;
    expect(err).toBeInstanceOf(LockContendedError);
    expect(elapsed).toBeGreaterThanOrEqual(3 * 80);
    expect(elapsed).toBeLessThan(3 * 120 + 500);
    expect(events[0]).toBeGreaterThanOrEqual(4);
    expect(events[0]).toBeLessThanOrEqual(6);
    await held.release();
  });

  it('a failed attempt releases on every node before retrying, so a waiter never blocks itself', async () => {
    const [a, b] = await pair('self');
    // Someone else holds nodes 1–3: b's attempts get nodes 4 and 5 and must give them back.
    for (const c of env.direct.slice(0, 3)) await c.set(a.lockKey('res'), 'foreign', 'PX', 2_000);
    await expect(b.acquire('res', 5_000)).rejects.toBeInstanceOf(LockContendedError);
    await waitFor(
      async () => (await Promise.all(env.direct.slice(3).map((c) => c.exists(a.lockKey('res'))))).every((x) => x === 0),
      1_000,
      'the failed attempt to be cleaned up on nodes 4 and 5',
    );
    // So as soon as one of nodes 1–3 frees up, the next attempt wins with nodes 4 and 5.
    const waiting = b.acquire('res', 5_000, { retryCount: 20, retryDelayMs: 30, retryJitterMs: 10 });
    // pace: the waiter retries a few times before node 1 frees up
    await sleep(100);
    await env.direct[0]!.del(a.lockKey('res'));
    const lock = await waiting;
    expect((await Promise.all(env.direct.map((c) => c.get(a.lockKey('res'))))).map((v) => v && tokenOf(v))).toEqual([
      lock.token,
      'foreign',
      'foreign',
      lock.token,
      lock.token,
    ]);
    await lock.release();
  });

  it('no unhandled rejections happened in this file', () => {
    expect(unhandled).toEqual([]);
  });
});

describe('maxWaitMs: a wait that runs out says why', () => {
  it('held by another client: LockContendedError once maxWaitMs has passed, not after the retry budget', async () => {
    const [a, b] = await pair('max-wait-held');
    const held = await a.acquire('res', 10_000);
    const t0 = performance.now();
    const err: unknown = await b.acquire('res', 5_000, { retryCount: 1_000, retryDelayMs: 50, maxWaitMs: 400 }).catch((e: unknown) => e);
    const elapsed = performance.now() - t0;
    expect(err).toBeInstanceOf(LockContendedError);
    expect(elapsed).toBeGreaterThanOrEqual(380);
    expect(elapsed).toBeLessThan(3_000); // far below 1,000 retries × 50 ms
    await held.release();
  });

  it('no quorum reachable: QuorumUnavailableError (an outage), not a timeout or contention', async () => {
    const prefix = uniquePrefix('max-wait-outage');
    // Two live masters and three ports nobody listens on.
    const urls = [...env.cluster.urls.slice(0, 2), 'redis://127.0.0.1:1', 'redis://127.0.0.1:2', 'redis://127.0.0.1:3'];
    const r = new Redlock(urls, { keyPrefix: prefix, retryCount: 0 });
    redlocks.push(r);
    await r.markNodesClean().catch(() => undefined);
    const err: unknown = await r.acquire('res', 5_000, { retryCount: 1_000, retryDelayMs: 50, maxWaitMs: 300 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(QuorumUnavailableError);
  });

  it('a bad maxWaitMs is refused before any traffic', async () => {
    const [a] = await pair('max-wait-bad');
    await expect(a.acquire('res', 5_000, { maxWaitMs: -1 })).rejects.toBeInstanceOf(InvalidArgumentError);
  });
});
