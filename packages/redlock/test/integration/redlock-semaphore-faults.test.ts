import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import {
  ioredisClient,
  LockContendedError,
  MaxTtlMismatchError,
  Permit,
  QuorumUnavailableError,
  Redlock,
  RedlockError,
  tokenOf,
  type RedlockClient,
  type RedlockSettings,
} from '@redlock-console/redlock';
import { uniquePrefix, waitFor } from '@/test/support/cluster';
import { redlockEnv } from '@/test/support/redlock-env';

// The semaphore under the two things that break the usual Redlock semaphore and a mutex: the
// arrival orders of docs/semaphores.md (no fault at all), and a node that restarts without
// persistence while it holds a slot (the quarantine applies to slots as to any lock key).

const env = redlockEnv();
const { redlocks, unhandled } = env;
const MAX_TTL = 3_000;

function client(prefix: string, settings: Partial<RedlockSettings> = {}): Redlock {
  const r = new Redlock(env.cluster.urls, { keyPrefix: prefix, maxTtlMs: MAX_TTL, retryCount: 0, nodeTimeoutMs: 1_000, ...settings });
  redlocks.push(r);
  return r;
}

/** The arrival orders of the design note's table: per client, the delay before its commands leave for each node. */
const STEP = 150;
const ORDERS: Record<'A' | 'B' | 'C', number[]> = {
  // node:  1  2  3  4  5      (arrives first = 0, second = 1, third = 2)
  A: [0, 0, 0, 2, 1],
  B: [2, 2, 1, 0, 0],
  C: [1, 1, 2, 1, 2],
};

/** An ioredis client whose commands leave `delayMs` late (in their order: equal delays keep it). */
function delayedClient(url: string, delayMs: number, owned: Redis[]): RedlockClient {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  redis.on('error', () => undefined);
  owned.push(redis);
  const inner = ioredisClient(redis);
  return {
    kind: 'delayed',
    label: inner.label,
    target: inner.target,
    isReady: () => inner.isReady(),
    onReady: (listener) => inner.onReady(listener),
    send: (commands) => void setTimeout(() => inner.send(commands), delayMs),
    subscribe: (channel, handlers) => inner.subscribe(channel, handlers),
  };
}

/** Per-node count of holders (the usual Redlock semaphore's admission, without expiry): admitted when fewer than `limit`. */
const COUNT_ADMIT = `if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then redis.call('ZADD', KEYS[1], 0, ARGV[2]) return 1 end return 0`;

describe("the design note's interleaving: limit 2, three clients, five nodes", () => {
  it('negative control: a per-node count of holders admits all three on a majority each', async () => {
    const prefix = uniquePrefix('count');
    const admitted = await Promise.all(
      (['A', 'B', 'C'] as const).map(async (name) => {
        const votes = await Promise.all(
          env.direct.map(async (c, n) => {
            // pace: the order in which this node receives the clients' requests is the interleaving under test
            await new Promise((res) => setTimeout(res, ORDERS[name][n]! * STEP));
            return c.eval(COUNT_ADMIT, 1, `${prefix}count`, 2, name);
          }),
        );
        return votes.filter((v) => v === 1).length;
      }),
    );
    // A on 1, 2, 3, 5; B on 3, 4, 5; C on 1, 2, 4: three holders of two permits.
    expect(admitted).toEqual([4, 3, 3]);
  });

  it('the slot semaphore under the same arrival orders never has three holders', async () => {
    const prefix = uniquePrefix('interleave');
    const owned: Redis[] = [];
    const make = (name: 'A' | 'B' | 'C') => {
      const nodes = env.cluster.urls.map((url, n) => delayedClient(url, ORDERS[name][n]! * STEP, owned));
      const r = new Redlock(nodes, { keyPrefix: prefix, retryCount: 0, nodeTimeoutMs: 4 * STEP + 2_000 });
      redlocks.push(r);
      return r;
    };
    const [a, b, c] = [make('A'), make('B'), make('C')];
    try {
      await a.markNodesClean();
      let granted = 0;
      for (let trial = 0; trial < 6; trial++) {
        const outcomes = await Promise.all([a, b, c].map((r) => r.acquireSemaphore('s', 2, 10_000).catch((e: unknown) => e)));
        const holders = outcomes.filter((o): o is Permit => o instanceof Permit);
        for (const o of outcomes) if (!(o instanceof Permit)) expect(o).toBeInstanceOf(RedlockError);
        expect(holders.length).toBeLessThanOrEqual(2);
        expect(new Set(holders.map((p) => p.slot)).size).toBe(holders.length);
        granted += holders.length;
        await Promise.all(holders.map(async (p) => (await p.release()).settled));
      }
      expect(granted).toBeGreaterThan(0);
    } finally {
      await Promise.all([a, b, c].map((r) => r.quit()));
      for (const r of owned) r.disconnect();
    }
  }, 60_000);
});

/**
 * Acquire until node `index` answers something other than a connection error (our clients
 * reconnect after a restart) or a late reply (a loaded machine may answer a first check late).
 */
async function acquireOnceAnswered(r: Redlock, index: number): Promise<unknown> {
  let outcome: unknown = null;
  await waitFor(
    async () => {
      outcome = await r.acquireSemaphore('sem', 1, 1_000).catch((e: unknown) => e);
      return !(outcome instanceof RedlockError && /^(error|timeout|pending)$/.test(outcome.votes[index]?.reason ?? ''));
    },
    5_000,
    `node ${index + 1} to answer`,
  );
  return outcome;
}

/** A holds the one slot of a 1-permit semaphore on nodes 1, 2 and 3 only; node 3 then restarts empty. */
async function restartScenario(prefix: string): Promise<Permit> {
  const a = client(prefix);
  await a.markNodesClean();
  await env.cluster.supervisor.partition(4);
  await env.cluster.supervisor.partition(5);
  const permitA = await a.acquireSemaphore('sem', 1, MAX_TTL);
  // The proxies hold A's SETs to 4 and 5 and would deliver them on heal: drop them, as a real
  // partition eventually does, so A holds exactly nodes 1, 2 and 3.
  await env.cluster.supervisor.act(4, { action: 'reset' });
  await env.cluster.supervisor.act(5, { action: 'reset' });
  await env.cluster.supervisor.crash(3);
  await env.cluster.supervisor.restart(3, { persistence: 'none' });
  await env.cluster.supervisor.heal(4);
  await env.cluster.supervisor.heal(5);
  const held = await Promise.all(env.direct.map((c) => c.get(`${prefix}sem:sem:0`)));
  expect(held.map((v) => v && tokenOf(v))).toEqual([permitA.token, permitA.token, null, null, null]);
  return permitA;
}

describe('a node that restarts without persistence while it holds a slot', () => {
  it('negative control, quarantine: false: B is granted the slot A still holds, two holders of one permit', async () => {
    const prefix = uniquePrefix('sem-unsafe');
    const permitA = await restartScenario(prefix);
    const permitB = await acquireOnceAnswered(client(prefix, { quarantine: false }), 2);
    expect(permitB).toBeInstanceOf(Permit);
    expect(permitA.validityMs).toBeGreaterThan(0);
    expect((permitB as Permit).validityMs).toBeGreaterThan(0);
    expect((permitB as Permit).slot).toBe(permitA.slot);
  });

  it('default: B is refused (node 3 votes quarantined) while A holds the permit', async () => {
    const prefix = uniquePrefix('sem-safe');
    const permitA = await restartScenario(prefix);
    const refused = await acquireOnceAnswered(client(prefix), 2);
    expect(refused).toBeInstanceOf(LockContendedError);
    expect((refused as LockContendedError).votes[2]).toMatchObject({ vote: 'against', reason: 'quarantined' });
    expect(permitA.validityMs).toBeGreaterThan(0);
    await permitA.release();
  });
});

/**
 * An ioredis client whose replies reach the lock core `delayMs` late (the commands run at once), and
 * which counts the semaphore slot reads (GET <prefix>sem:…) answered by the node and delivered.
 */
function slowRepliesClient(url: string, delayMs: number, owned: Redis[], reads: { answered: number; delivered: number; inFlight: number }) {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  redis.on('error', () => undefined);
  owned.push(redis);
  const inner = ioredisClient(redis);
  const client: RedlockClient = {
    kind: 'slow-replies',
    label: inner.label,
    target: inner.target,
    isReady: () => inner.isReady(),
    onReady: (listener) => inner.onReady(listener),
    send: (commands) => {
      reads.inFlight += commands.length;
      inner.send(
        commands.map((c) => {
          const read = c.args[0]!.toString() === 'GET' && c.args[1]!.toString().includes('sem:');
          return {
            args: c.args,
            settle: (err: Error | null, value?: unknown) => {
              if (read) reads.answered++;
              setTimeout(() => {
                reads.inFlight--;
                if (read) reads.delivered++;
                c.settle(err, value);
              }, delayMs);
            },
          };
        }),
      );
    },
    subscribe: (channel, handlers) => inner.subscribe(channel, handlers),
  };
  return client;
}

describe("a full semaphore's waiter and a second release of the slot that woke it", () => {
  it('a release of that slot while its attempt is under way makes it try again at once, not sleep out its retry delay', async () => {
    const prefix = uniquePrefix('sem-rewake');
    const owned: Redis[] = [];
    const reads = { answered: 0, delivered: 0, inFlight: 0 };
    // Leases that outlast the test's steps (A's permit must not expire on its own).
    const maxTtlMs = 60_000;
    const a = client(prefix, { maxTtlMs });
    await a.markNodesClean();
    const w = new Redlock(
      env.cluster.urls.map((url) => slowRepliesClient(url, 1_000, owned, reads)),
      { keyPrefix: prefix, maxTtlMs, nodeTimeoutMs: 4_000 },
    );
    redlocks.push(w);
    try {
      const held = await a.acquireSemaphore('s', 1, maxTtlMs);
      const waiting = w.acquireSemaphore('s', 1, maxTtlMs, { fenced: false, retryCount: 2, retryDelayMs: 20_000, retryJitterMs: 0 });
      // W's first attempt met A's slot; after its subscription came up it read the slots (full)
      // and sleeps now.
      await waitFor(() => reads.delivered >= 5 && reads.inFlight === 0, 15_000, 'W to read the slots and sleep');
      // The slot is released and at once taken again (another client's short hold): W is woken
      // by the message and reads the slots, which still hold A's key.
      const answered = reads.answered;
      for (const c of env.direct) await c.publish(`${prefix}released`, 'sem:s:0');
      await waitFor(() => reads.answered >= answered + 5 * 2, 10_000, "W's read to be answered by every node");
      // W's read is answered (full), its replies on their way: now the slot is released for real.
      expect(reads.inFlight).toBeGreaterThan(0);
      const releasedAt = performance.now();
      await (
        await held.release()
      ).settled;
      const permit = await waiting;
      const handoff = performance.now() - releasedAt;
      console.log(`a release during the woken waiter's attempt: granted ${handoff.toFixed(0)} ms after it (retry delay 20 s)`);
      expect(handoff).toBeLessThan(12_000);
      await permit.release();
    } finally {
      await w.quit();
      for (const r of owned) r.disconnect();
    }
  }, 60_000);
});

describe("the mutex's other mechanisms apply to slots unchanged", () => {
  it('the lease ceiling agreement applies: a client of another maxTtlMs gets MaxTtlMismatchError, not retried', async () => {
    const prefix = uniquePrefix('sem-ceiling');
    await client(prefix).markNodesClean(); // records the ceiling MAX_TTL
    const other = client(prefix, { maxTtlMs: 2 * MAX_TTL });
    const attempts: number[] = [];
    other.on('acquire', (e) => attempts.push(e.attempts));
    const refused = await other.acquireSemaphore('sem', 2, 1_000, { retryCount: 5, retryDelayMs: 200 }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(MaxTtlMismatchError);
    expect(refused).toMatchObject({ recordedMaxTtlMs: MAX_TTL, clientMaxTtlMs: 2 * MAX_TTL });
    expect(attempts).toEqual([1]);
  });

  it('nodes that may evict vote against (unsafe-eviction): with three of five, no permit', async () => {
    const prefix = uniquePrefix('sem-evict');
    const a = client(prefix);
    await a.markNodesClean();
    try {
      for (const c of env.direct.slice(2)) await c.config('SET', 'maxmemory-policy', 'allkeys-lru');
      const refused = await a.acquireSemaphore('sem', 2, 1_000).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(QuorumUnavailableError);
      for (const i of [2, 3, 4])
        expect((refused as QuorumUnavailableError).votes[i]).toMatchObject({ vote: 'against', reason: 'unsafe-eviction' });
    } finally {
      for (const c of env.direct) await c.config('SET', 'maxmemory-policy', 'noeviction');
    }
  });

  it('retries are bounded: a full semaphore ends in LockContendedError after retryCount sleeps', async () => {
    const prefix = uniquePrefix('sem-retries');
    const a = client(prefix);
    await a.markNodesClean();
    const held = await a.acquireSemaphore('sem', 1, MAX_TTL);
    const b = client(prefix);
    const attempts: number[] = [];
    b.on('acquire', (e) => attempts.push(e.attempts));
    const t0 = performance.now();
    const refused = await b
      .acquireSemaphore('sem', 1, 1_000, { retryCount: 3, retryDelayMs: 50, retryJitterMs: 0 })
      .catch((e: unknown) => e);
    const elapsed = performance.now() - t0;
    expect(refused).toBeInstanceOf(LockContendedError);
    // 1 + retryCount, and the free retries a wake-up gives (the subscriptions coming up wake every waiter once).
    expect(attempts[0]).toBeGreaterThanOrEqual(4);
    expect(attempts[0]).toBeLessThanOrEqual(6);
    expect(elapsed).toBeGreaterThanOrEqual(145);
    expect(elapsed).toBeLessThan(5_000);
    await held.release();
  });

  it('no unhandled rejections happened in this file', () => {
    expect(unhandled).toEqual([]);
  });
});
