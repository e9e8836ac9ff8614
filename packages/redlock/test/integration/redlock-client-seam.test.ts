import { describe, expect, it, vi } from 'vitest';
import { Redis as Redis5 } from 'ioredis';
import { Redis as Redis6 } from 'ioredis6';
import { createClient, RESP_TYPES } from 'redis';
import {
  InvalidArgumentError,
  ioredisClient,
  LockContendedError,
  nodeRedisClient,
  readEpoch,
  Redlock,
  type RedlockNodeTarget,
} from '@redlock-console/redlock';
import { uniquePrefix } from '@/test/support/cluster';
import { redlockEnv } from '@/test/support/redlock-env';

// The client seam's conformance suite (src/client.ts): one set of checks, run against every
// adapter on real redis-servers — ioredis 5, ioredis 6 and node-redis 5, each in RESP2 and RESP3
// where the client speaks it, detected by shape or given through the explicit adapter function.
// What each check guards: acquire / contention / extend / release and the fence order are decided
// by the replies the adapter carries (mutual exclusion: a quorum of SET NX; fence order: the
// registers' scripts), so they must read the same through every client; quarantine detection needs
// the adapter's `ready` after a restart (a new connection is checked) and its replies to the probe;
// the wake-up needs its subscription. Before the seam, a node-redis client was refused
// (InvalidArgumentError) and every check below failed for it.

const env = redlockEnv();
const { redlocks, unhandled } = env;

interface Made {
  node: RedlockNodeTarget;
  close: () => Promise<void> | void;
}

const ADAPTERS: ReadonlyArray<{ name: string; make: (url: string) => Promise<Made> }> = [
  { name: 'ioredis 5 (RESP2)', make: async (url) => ioredis(new Redis5(url, { maxRetriesPerRequest: 1 })) },
  {
    name: 'ioredis 6 (RESP3)',
    make: async (url) => ioredis(new Redis6(url, { maxRetriesPerRequest: 1 }) as unknown as Redis5),
  },
  {
    name: 'ioredis 6 (RESP2)',
    make: async (url) => ioredis(new Redis6(url, { protocol: 2, maxRetriesPerRequest: 1 }) as unknown as Redis5),
  },
  {
    name: 'ioredis 5 through ioredisClient()',
    make: async (url) => {
      const made = ioredis(new Redis5(url, { maxRetriesPerRequest: 1 }));
      return { ...made, node: ioredisClient(made.node as Redis5) };
    },
  },
  { name: 'node-redis 5 (RESP2)', make: (url) => nodeRedis(url, 2, false) },
  { name: 'node-redis 5 (RESP3)', make: (url) => nodeRedis(url, 3, false) },
  { name: 'node-redis 5 through nodeRedisClient()', make: (url) => nodeRedis(url, 2, true) },
  // Client-wide options the owner may set (node-redis' own createClient example sets asap and a
  // typeMapping): asap would write each command of a batch at the head of the queue (reversed),
  // a typeMapping would hand the core Maps and strings for numbers. The adapter overrides them per command.
  {
    name: 'node-redis 5 (RESP3) with client-wide asap and a typeMapping',
    make: (url) => nodeRedis(url, 3, false, { asap: true, typeMapping: { [RESP_TYPES.NUMBER]: String, [RESP_TYPES.MAP]: Map } }),
  },
];

function ioredis(client: Redis5): Made {
  client.on('error', () => undefined);
  return { node: client, close: () => client.disconnect() };
}

async function nodeRedis(url: string, RESP: 2 | 3, explicit: boolean, commandOptions?: object): Promise<Made> {
  const client = createClient({ url, RESP, socket: { reconnectStrategy: () => 50 }, ...(commandOptions ? { commandOptions } : {}) });
  client.on('error', () => undefined);
  await client.connect();
  return { node: explicit ? nodeRedisClient(client) : client, close: () => client.destroy() };
}

async function redlockOn(make: (url: string) => Promise<Made>, name: string) {
  const made = await Promise.all(env.cluster.urls.map((url) => make(url)));
  // nodeTimeoutMs 1 s: about what each client's replies look like, not latency (a loaded 2-core machine).
  const r = new Redlock(
    made.map((m) => m.node),
    { keyPrefix: uniquePrefix(name), retryCount: 0, nodeTimeoutMs: 1_000 },
  );
  redlocks.push(r);
  const marked = await r.markNodesClean();
  expect(marked.complete).toBe(true);
  return { r, close: () => Promise.all(made.map((m) => m.close())) };
}

const forVotes = (votes: readonly { vote: string }[]) => votes.filter((v) => v.vote === 'for').length;

describe.each(ADAPTERS)('the client seam: $name', ({ name, make }) => {
  it('acquire, contention, extend, release, and fence order', async () => {
    const { r, close } = await redlockOn(make, `seam-core-${name}`);
    try {
      const lock = await r.acquire('a', 5_000);
      expect(typeof lock.fence).toBe('number');
      expect(forVotes(lock.votes)).toBeGreaterThanOrEqual(3);
      const refused = await r.acquire('a', 5_000).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(LockContendedError);
      expect((refused as LockContendedError).votes.filter((v) => v.reason === 'contended').length).toBeGreaterThanOrEqual(3);
      await lock.extend(5_000);
      expect(lock.extensions).toBe(1);
      const released = await (await lock.release()).settled;
      expect(released).toMatchObject({ deleted: 5, complete: true });
      // Fence order: each grant's fence is above every earlier one, across resources and rounds.
      let last = lock.fence!;
      for (const resource of ['a', 'b', 'a']) {
        const next = await r.acquire(resource, 5_000);
        expect(next.fence!).toBeGreaterThan(last);
        last = next.fence!;
        await next.release();
      }
      const two = await r.acquire(['x', 'y'], 5_000);
      expect(two.fence!).toBeGreaterThan(last);
      await two.release();
      expect(unhandled).toEqual([]);
    } finally {
      await close();
    }
  }, 60_000);

  it('a waiter is woken by the release over pub/sub, long before its retry delay', async () => {
    const { r, close } = await redlockOn(make, `seam-wake-${name}`);
    try {
      const held = await r.acquire('w', 20_000);
      const started = performance.now();
      const waiting = r.acquire('w', 5_000, { retryCount: 3, retryDelayMs: 15_000, retryJitterMs: 0 });
      // The waiter's subscription is up once it sleeps: give it the time to subscribe, by condition.
      await vi.waitFor(
        async () =>
          expect((await env.direct[0]!.call('PUBSUB', 'NUMSUB', `${r.settings.keyPrefix}released`)) as unknown[]).toEqual([
            `${r.settings.keyPrefix}released`,
            1,
          ]),
        { timeout: 10_000, interval: 20 },
      );
      await held.release();
      const got = await waiting;
      // Woken by the message: well within the 15 s delay it would otherwise sleep out.
      expect(performance.now() - started).toBeLessThan(10_000);
      expect(got.fence!).toBeGreaterThan(held.fence!);
      await got.release();
    } finally {
      await close();
    }
  }, 60_000);

  it('quarantine detection through the client: a lost sentinel and a restarted node never vote for', async () => {
    const { r, close } = await redlockOn(make, `seam-quarantine-${name}`);
    const prefix = r.settings.keyPrefix;
    try {
      await (await r.acquire('q', 5_000)).release();
      // Flush evidence: node 4 loses this prefix's sentinel.
      await env.direct[3]!.del(`${prefix}epoch`);
      const afterLoss = await r.acquire('q', 5_000);
      expect(afterLoss.votes[3]!.vote).not.toBe('for');
      await afterLoss.release();
      await vi.waitFor(async () => expect((await readEpoch(env.direct[3]!, prefix))?.cause).toBe('data-loss'), { timeout: 10_000 });

      // Restart evidence: node 5 crashes and starts again empty; the client reconnects by itself
      // and the new connection is checked before node 5 votes again.
      await env.cluster.supervisor.crash(5);
      await env.cluster.supervisor.restart(5, { persistence: 'none' });
      await vi.waitFor(
        async () => {
          const lock = await r.acquire('q', 5_000);
          try {
            expect(lock.votes[4]!.reason).toBe('quarantined');
          } finally {
            await lock.release();
          }
        },
        { timeout: 20_000, interval: 100 },
      );
      expect((await readEpoch(env.direct[4]!, prefix))?.cause).toMatch(/^(data-loss|restart)$/);
    } finally {
      await close();
    }
  }, 60_000);
});

describe('what the seam refuses', () => {
  it('a node-redis cluster, and an object that is no client, with InvalidArgumentError', () => {
    const cluster = { masters: [], sendCommand: () => undefined, duplicate: () => undefined, isReady: true };
    expect(() => new Redlock([cluster as unknown as RedlockNodeTarget])).toThrow(InvalidArgumentError);
    expect(() => new Redlock([{ get: () => undefined } as unknown as RedlockNodeTarget])).toThrow(/ioredis or node-redis client/);
  });
});

describe('the node-redis adapter writes each call in the order given, whatever the owner set client-wide', () => {
  // node-redis merges a client's `commandOptions` into every command; `asap` writes a command at
  // the head of the queue, so commands sent in one tick go out reversed. The core's batches are
  // ordered on purpose ([TIME, SET, probe]: a grant's validity is counted from a clock read
  // before its SET), so the adapter overrides the option per command (client-node-redis.ts).
  // Without the override the replies come back out of order ([OK, 2, 1]: SET went after an APPEND),
  // and with the typeMapping the SET reply is a Buffer.
  it('asap set client-wide: SET then two APPENDs leave "123", and replies keep their plain types', async () => {
    const client = createClient({
      url: env.cluster.urls[0]!,
      commandOptions: { asap: true, typeMapping: { [RESP_TYPES.SIMPLE_STRING]: Buffer } },
    });
    client.on('error', () => undefined);
    await client.connect();
    try {
      const key = `${uniquePrefix('order')}k`;
      const replies = await new Promise<unknown[]>((resolve, reject) => {
        const out: unknown[] = [];
        let left = 3;
        const commands = [
          ['SET', key, '1'],
          ['APPEND', key, '2'],
          ['APPEND', key, '3'],
        ].map((args, i) => ({
          args: args.map((a) => Buffer.from(a)),
          settle: (err: Error | null, value?: unknown) => {
            if (err) return reject(err);
            out[i] = value;
            if (--left === 0) resolve(out);
          },
        }));
        nodeRedisClient(client).send(commands);
      });
      expect(replies).toEqual(['OK', 2, 3]);
      expect(await client.sendCommand(['GET', key], { asap: false })).toBe('123');
    } finally {
      client.destroy();
    }
  });
});
