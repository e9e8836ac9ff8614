import { describe, expect, it, vi } from 'vitest';
import { Redis as Redis5 } from 'ioredis';
import { Cluster as Cluster6, Redis as Redis6 } from 'ioredis6';
import { InvalidArgumentError, LockContendedError, readEpoch, Redlock, type RedlockSettings } from '@redlock-console/redlock';
import { uniquePrefix } from '@/test/support/cluster';
import { redlockEnv } from '@/test/support/redlock-env';
import { waitersAsleep } from '@/test/support/waiters';

// Clients a user passes in go through ioredis's public API only, so they may be of either major
// (5: RESP2; 6: RESP3 by default) and configured as the user likes. Before, a client of ioredis 6
// crashed the process (the core handed it ioredis 5 Command objects) on the first acquire.

const env = redlockEnv();
const { redlocks, unhandled } = env;

type Options = Record<string, unknown>;
const VARIANTS: ReadonlyArray<{ name: string; make: (url: string, options: Options) => Redis5 }> = [
  { name: 'ioredis 5', make: (url, options) => new Redis5(url, options) },
  { name: 'ioredis 6 (RESP3)', make: (url, options) => new Redis6(url, options) as unknown as Redis5 },
  {
    name: 'ioredis 6 (RESP3, replyMapping resp3)',
    make: (url, options) => new Redis6(url, { replyMapping: 'resp3', ...options }) as unknown as Redis5,
  },
  { name: 'ioredis 6 (RESP2)', make: (url, options) => new Redis6(url, { protocol: 2, ...options }) as unknown as Redis5 },
];
const CONFIGS: ReadonlyArray<{ name: string; options: Options }> = [
  { name: 'defaults', options: {} },
  { name: 'stringNumbers', options: { stringNumbers: true } },
  { name: 'auto-pipelining', options: { enableAutoPipelining: true } },
];

async function withClients(
  make: (url: string, options: Options) => Redis5,
  options: Options,
  name: string,
  settings: Partial<RedlockSettings> = {},
) {
  const clients = env.cluster.urls.map((url) => {
    const c = make(url, options);
    c.on('error', () => undefined);
    return c;
  });
  // nodeTimeoutMs 1 s: these tests are about what each client's replies look like, not latency; a
  // client passed in gets the probe script's own fast read (a Lua call with INFO per batch), which
  // on a loaded two-core machine can miss the default 100 ms under 16 concurrent loops.
  const r = new Redlock(clients, { keyPrefix: uniquePrefix(name), retryCount: 0, nodeTimeoutMs: 1_000, ...settings });
  redlocks.push(r);
  await r.markNodesClean();
  return { r, clients, close: () => clients.forEach((c) => c.disconnect()) };
}

describe('the lock core on clients passed in', () => {
  for (const variant of VARIANTS) {
    for (const config of CONFIGS) {
      it(`${variant.name}, ${config.name}: fenced grant, contention, extend, release, several resources, a data loss seen, 16 loops`, async () => {
        const { r, close } = await withClients(variant.make, config.options, 'clients');
        try {
          const lock = await r.acquire('a', 5_000);
          expect(typeof lock.fence).toBe('number');
          expect(lock.votes.filter((v) => v.vote === 'for').length).toBeGreaterThanOrEqual(3);
          const refused = await r.acquire('a', 5_000).catch((e: unknown) => e);
          expect(refused).toBeInstanceOf(LockContendedError);
          const extended = await lock.extend(5_000);
          expect(extended.votes.filter((v) => v.reason === 'ok').length).toBeGreaterThanOrEqual(3);
          const released = await (await lock.release()).settled;
          expect(released.deleted).toBe(5);
          const again = await r.acquire('a', 5_000);
          expect(again.fence!).toBeGreaterThan(lock.fence!);
          await again.release();
          const two = await r.acquire(['x', 'y'], 5_000);
          await two.release();

          // Node 5 loses its data: read through this client's replies, it never votes for, and its
          // check writes a data-loss quarantine.
          await env.direct[4]!.del(`${r.settings.keyPrefix}epoch`);
          const after = await r.acquire('b', 5_000);
          expect(after.votes[4]!.vote).not.toBe('for');
          await after.release();
          await vi.waitFor(async () => expect((await readEpoch(env.direct[4]!, r.settings.keyPrefix))?.cause).toBe('data-loss'));

          let failures = 0;
          let granted = 0;
          const end = performance.now() + 600;
          await Promise.all(
            Array.from({ length: 16 }, async (_, w) => {
              while (performance.now() < end) {
                try {
                  const l = await r.acquire(`w${w}`, 5_000, { fenced: w % 2 === 0 });
                  await l.release();
                  granted++;
                } catch {
                  failures++;
                }
              }
            }),
          );
          expect(failures).toBe(0);
          expect(granted).toBeGreaterThan(16);
        } finally {
          await r.quit();
          close();
        }
      });
    }
  }

  for (const variant of VARIANTS) {
    it(`${variant.name}: a waiting acquire is woken by the release over the client's own pub/sub duplicate, not by its retry timer`, async () => {
      const { r, close } = await withClients(variant.make, {}, 'clients-wake', { retryCount: 3, retryDelayMs: 8_000, retryJitterMs: 0 });
      try {
        const held = await r.acquire('q', 10_000);
        const started = performance.now();
        const waiting = r.acquire('q', 10_000);
        // Refused, subscribed, and sleeping its 8 s delay: only the release's message can wake it.
        await waitersAsleep(r);
        await held.release();
        const woken = await waiting;
        // Without the wake-up the second attempt would come 8 s after the first.
        expect(performance.now() - started).toBeLessThan(3_000);
        await woken.release();
      } finally {
        await r.quit();
        close();
      }
    });
  }

  it("a client with the ioredis keyPrefix option is refused (it would move the lock core's keys)", () => {
    const client = new Redis6(env.cluster.urls[0]!, { keyPrefix: 'app:', lazyConnect: true });
    try {
      expect(() => new Redlock([client as unknown as Redis5], {})).toThrow(InvalidArgumentError);
      expect(() => new Redlock([client as unknown as Redis5], {})).toThrow(/keyPrefix/);
    } finally {
      client.disconnect();
    }
  });

  it("a Redis Cluster client and a Buffer keyPrefix are refused; Sentinel-managed clients are told apart by their master's name", () => {
    const cluster = new Cluster6([{ host: '127.0.0.1', port: 1 }], { lazyConnect: true });
    const prefixed = new Redis5(env.cluster.urls[0]!, { keyPrefix: Buffer.from('app:') as unknown as string, lazyConnect: true });
    const sentinels = ['a', 'b'].map(
      (name) => new Redis6({ sentinels: [{ host: '127.0.0.1', port: 1 }], name, lazyConnect: true }) as unknown as Redis5,
    );
    try {
      expect(() => new Redlock([cluster as unknown as Redis5], {})).toThrow(/Cluster client cannot be a node/);
      expect(() => new Redlock([prefixed], {})).toThrow(/keyPrefix/);
      const r = new Redlock(sentinels, { keyPrefix: uniquePrefix('sentinel') });
      expect(r.nodeLabels).toEqual(['sentinel:a', 'sentinel:b']);
      void r.quit();
    } finally {
      cluster.disconnect();
      prefixed.disconnect();
      for (const s of sentinels) s.disconnect();
    }
  });

  it('no unhandled rejections happened in this file', () => {
    expect(unhandled).toEqual([]);
  });
});
