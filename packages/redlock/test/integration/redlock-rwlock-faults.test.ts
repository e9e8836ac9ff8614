import { describe, expect, it } from 'vitest';
import {
  LockContendedError,
  MaxTtlMismatchError,
  QuorumUnavailableError,
  Redlock,
  RedlockError,
  RwLock,
  tokenOf,
  type RedlockSettings,
} from '@redlock-console/redlock';
import { uniquePrefix, waitFor } from '@/test/support/cluster';
import { redlockEnv } from '@/test/support/redlock-env';

// The read-write lock under the faults the mutex survives: a node that restarts without
// persistence while it holds a reader's slot (the quarantine applies to slots as to any lock key),
// a failed attempt's keys on the nodes that granted them, the lease ceiling and eviction checks.

const env = redlockEnv();
const { redlocks, unhandled } = env;
const MAX_TTL = 3_000;

function client(prefix: string, settings: Partial<RedlockSettings> = {}): Redlock {
  const r = new Redlock(env.cluster.urls, { keyPrefix: prefix, maxTtlMs: MAX_TTL, retryCount: 0, nodeTimeoutMs: 1_000, ...settings });
  redlocks.push(r);
  return r;
}

/**
 * Acquire the write lock until node `index` answers something other than a connection error (our
 * clients reconnect after a restart) or a late reply (a loaded machine may answer a first check late).
 */
async function writeOnceAnswered(r: Redlock, index: number): Promise<unknown> {
  let outcome: unknown = null;
  await waitFor(
    async () => {
      outcome = await r.acquireWrite('rw', 1_000, { maxReaders: 1 }).catch((e: unknown) => e);
      return !(outcome instanceof RedlockError && /^(error|timeout|pending)$/.test(outcome.votes[index]?.reason ?? ''));
    },
    5_000,
    `node ${index + 1} to answer`,
  );
  return outcome;
}

/** A reader holds the one slot of a 1-reader lock on nodes 1, 2 and 3 only; node 3 then restarts empty. */
async function restartScenario(prefix: string): Promise<RwLock> {
  const a = client(prefix);
  await a.markNodesClean();
  await env.cluster.supervisor.partition(4);
  await env.cluster.supervisor.partition(5);
  const reader = await a.acquireRead('rw', MAX_TTL, { maxReaders: 1 });
  // The proxies hold A's commands to 4 and 5 and would deliver them on heal: drop them, as a real
  // partition eventually does, so A holds exactly nodes 1, 2 and 3.
  await env.cluster.supervisor.act(4, { action: 'reset' });
  await env.cluster.supervisor.act(5, { action: 'reset' });
  await env.cluster.supervisor.crash(3);
  await env.cluster.supervisor.restart(3, { persistence: 'none' });
  await env.cluster.supervisor.heal(4);
  await env.cluster.supervisor.heal(5);
  const held = await Promise.all(env.direct.map((c) => c.get(`${prefix}rw:rw:0`)));
  expect(held.map((v) => v && tokenOf(v))).toEqual([reader.token, reader.token, null, null, null]);
  return reader;
}

describe('a node that restarts without persistence while it holds a reader slot', () => {
  it('negative control, quarantine: false: a writer is granted while the reader still holds, a writer with a reader', async () => {
    const prefix = uniquePrefix('rw-unsafe');
    const reader = await restartScenario(prefix);
    const writer = await writeOnceAnswered(client(prefix, { quarantine: false }), 2);
    expect(writer).toBeInstanceOf(RwLock);
    expect(reader.validityMs).toBeGreaterThan(0);
    expect((writer as RwLock).validityMs).toBeGreaterThan(0);
    expect((writer as RwLock).mode).toBe('write');
  }, 30_000);

  it('default: the writer is refused (node 3 votes quarantined) while the reader holds', async () => {
    const prefix = uniquePrefix('rw-safe');
    const reader = await restartScenario(prefix);
    const refused = await writeOnceAnswered(client(prefix), 2);
    expect(refused).toBeInstanceOf(LockContendedError);
    expect((refused as LockContendedError).votes[2]).toMatchObject({ vote: 'against', reason: 'quarantined' });
    expect(reader.validityMs).toBeGreaterThan(0);
    await reader.release();
  }, 30_000);
});

describe('a stalled node', () => {
  it('costs a reader nothing while a quorum answers: its read is decided without waiting out the node timeout', async () => {
    const prefix = uniquePrefix('rw-stalled');
    const a = client(prefix, { nodeTimeoutMs: 4_000 });
    await a.markNodesClean();
    await env.cluster.supervisor.partition(5);
    try {
      const t0 = performance.now();
      const reader = await a.acquireRead('s', 2_000, { fenced: false });
      const took = performance.now() - t0;
      console.log(`a reader with node 5 stalled: granted in ${took.toFixed(0)} ms (node timeout 4 s)`);
      expect(reader.votes[4]).toMatchObject({ reason: 'pending' });
      expect(took).toBeLessThan(2_000);
      await reader.release();
    } finally {
      // Drop what the proxy held for node 5 (the grant and its release), then let it through again.
      await env.cluster.supervisor.act(5, { action: 'reset' });
      await env.cluster.supervisor.heal(5);
    }
  }, 30_000);
});

describe("a failed attempt's keys are cleaned up on every node", () => {
  it('a writer refused on nodes 1-3 (a foreign key on one slot) leaves nothing on 4 and 5, where its grant landed', async () => {
    const prefix = uniquePrefix('rw-cleanup');
    const a = client(prefix);
    await a.markNodesClean();
    // Another holder of slot 1 on a quorum only: the writer's grant lands on nodes 4 and 5 and no further.
    for (const c of env.direct.slice(0, 3)) await c.set(`${prefix}rw:c:1`, 'other-token', 'PX', 20_000);
    const refused = await a.acquireWrite('c', 2_000, { maxReaders: 3 }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(LockContendedError);
    // Nodes 4 and 5 hold nothing in the way: the writer's SETs ran there (sent to every node at
    // once, whatever the early decision), so only its cleanup can have emptied them.
    expect((refused as LockContendedError).cleanupPending).toEqual([]);
    // The compare-and-delete ran on every node before the acquire rejected.
    for (const c of env.direct.slice(3)) expect(await c.keys(`${prefix}rw:*`)).toEqual([]);
    for (const c of env.direct.slice(0, 3)) expect(await c.keys(`${prefix}rw:*`)).toEqual([`${prefix}rw:c:1`]);
    for (const c of env.direct) await c.del(`${prefix}rw:c:1`);
  });
});

describe("the mutex's other mechanisms apply to reader slots unchanged", () => {
  it('the lease ceiling agreement applies: a client of another maxTtlMs gets MaxTtlMismatchError, readers and writers alike, not retried', async () => {
    const prefix = uniquePrefix('rw-ceiling');
    await client(prefix).markNodesClean(); // records the ceiling MAX_TTL
    const other = client(prefix, { maxTtlMs: 2 * MAX_TTL });
    const attempts: number[] = [];
    other.on('acquire', (e) => attempts.push(e.attempts));
    for (const acquire of [
      () => other.acquireRead('rw', 1_000, { retryCount: 5 }),
      () => other.acquireWrite('rw', 1_000, { retryCount: 5 }),
    ]) {
      const refused = await acquire().catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(MaxTtlMismatchError);
      expect(refused).toMatchObject({ recordedMaxTtlMs: MAX_TTL, clientMaxTtlMs: 2 * MAX_TTL });
    }
    expect(attempts).toEqual([1, 1]);
  });

  it('nodes that may evict vote against (unsafe-eviction): with three of five, neither a reader nor a writer', async () => {
    const prefix = uniquePrefix('rw-evict');
    const a = client(prefix);
    await a.markNodesClean();
    try {
      for (const c of env.direct.slice(2)) await c.config('SET', 'maxmemory-policy', 'allkeys-lru');
      for (const acquire of [() => a.acquireRead('rw', 1_000), () => a.acquireWrite('rw', 1_000)]) {
        const refused = await acquire().catch((e: unknown) => e);
        expect(refused).toBeInstanceOf(QuorumUnavailableError);
        for (const i of [2, 3, 4])
          expect((refused as QuorumUnavailableError).votes[i]).toMatchObject({ vote: 'against', reason: 'unsafe-eviction' });
      }
    } finally {
      for (const c of env.direct) await c.config('SET', 'maxmemory-policy', 'noeviction');
    }
  });

  it('no unhandled rejections happened in this file', () => {
    expect(unhandled).toEqual([]);
  });
});
