import { describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { Redlock, type RedlockSettings } from '@redlock-console/redlock';
import { epochKey } from '../../src/keys';
import type { LockNode } from '../../src/node';
import { FenceCall, mergeFences } from '../../src/fence-group';
import { decodeCommand } from '../../src/resp';
import { uniquePrefix, waitFor } from '@/test/support/cluster';
import { redlockEnv } from '@/test/support/redlock-env';

// Releases and fence confirmations that one node's batch (one tick) carries go out as ONE script
// call each (script-group.ts, release-group.ts, fence-group.ts): what each member gets back, what
// is left on the nodes, and how many script calls the nodes ran, read from INFO commandstats.

const env = redlockEnv();
const { redlocks, unhandled } = env;

async function redlock(name: string, settings: Partial<RedlockSettings> = {}): Promise<{ r: Redlock; prefix: string }> {
  const prefix = uniquePrefix(name);
  // Checks once a minute: no probe script runs between the counts below.
  const r = new Redlock([...env.cluster.urls], { keyPrefix: prefix, retryCount: 0, nodeCheckIntervalMs: 60_000, ...settings });
  redlocks.push(r);
  await r.markNodesClean();
  await r.connect();
  await (await r.acquire('warm-up', 5_000)).release();
  return { r, prefix };
}

async function scriptCalls(client: Redis): Promise<number> {
  const m = /cmdstat_evalsha:calls=(\d+)/.exec(await client.info('commandstats'));
  return m ? Number(m[1]) : 0;
}

async function scriptCallsDuring(run: () => Promise<unknown>): Promise<number[]> {
  const before = await Promise.all(env.direct.map(scriptCalls));
  await run();
  const after = await Promise.all(env.direct.map(scriptCalls));
  return after.map((n, i) => n - before[i]!);
}

const names = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag}-${i}`);

function nodesOf(r: Redlock): LockNode[] {
  return (r as unknown as { nodes: LockNode[] }).nodes;
}

/**
 * Per node, how many fence confirmations `r` queued from now on, and the batches (one write each)
 * that carried them: a node's batch is a new array after each flush, so its identity names it.
 */
function trackFenceBatches(r: Redlock): { members: number[]; batches: Set<unknown>[] } {
  const members: number[] = [];
  const batches: Set<unknown>[] = [];
  for (const [i, node] of nodesOf(r).entries()) {
    members.push(0);
    batches.push(new Set());
    const callMerged = node.callMerged.bind(node);
    node.callMerged = (kind, merge, member, reply) => {
      callMerged(kind, merge, member, reply);
      if (!(member instanceof FenceCall)) return;
      members[i]!++;
      batches[i]!.add((node as unknown as { batch: unknown[] }).batch);
    };
  }
  return { members, batches };
}

const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);

describe('releases merged per batch', () => {
  it('twenty releases in one tick: one script call per node, each release answered with its own result, every key gone', async () => {
    const { r } = await redlock('merge-release');
    const locks = await Promise.all(names(20, 'res').map((name) => r.acquire(name, 10_000, { fenced: false })));
    let results: Awaited<ReturnType<(typeof locks)[number]['release']>>[] = [];
    const calls = await scriptCallsDuring(async () => {
      results = await Promise.all((await Promise.all(locks.map((lock) => lock.release()))).map((answered) => answered.settled));
    });
    // One call per node, where separate calls would make twenty.
    expect(calls).toEqual([1, 1, 1, 1, 1]);
    results.forEach((result, i) => {
      expect(result.resources).toEqual([`res-${i}`]);
      expect(result.deleted).toBe(5);
      expect(result.complete).toBe(true);
    });
    for (const client of env.direct) {
      expect(await Promise.all(locks.map((lock) => client.exists(r.lockKey(lock.resources[0]!))))).toEqual(locks.map(() => 0));
    }
    expect(unhandled).toEqual([]);
  });

  it('a member whose key another token holds on one node deletes nothing there, and the other members are not affected', async () => {
    const { r } = await redlock('merge-foreign');
    const locks = await Promise.all(names(6, 'f').map((name) => r.acquire(name, 10_000, { fenced: false })));
    const key = r.lockKey('f-2');
    // Node 1's key of f-2 now belongs to another holder (as after an expiry and a new grant there).
    await env.direct[0]!.set(key, 'intruder {"owner":"x"}', 'PX', 10_000);
    const results = await Promise.all((await Promise.all(locks.map((lock) => lock.release()))).map((answered) => answered.settled));
    expect(await env.direct[0]!.get(key)).toBe('intruder {"owner":"x"}');
    expect(results[2]!.deleted).toBe(4);
    expect(results[2]!.votes[0]).toMatchObject({ node: 1, vote: 'against', reason: 'not-held' });
    for (const [i, result] of results.entries()) if (i !== 2) expect(result.deleted).toBe(5);
    await env.direct[0]!.del(key);
  });

  it('after SCRIPT FLUSH the merged call is sent again with its source, and every member is answered', async () => {
    const { r } = await redlock('merge-noscript');
    const locks = await Promise.all(names(8, 'n').map((name) => r.acquire(name, 10_000, { fenced: false })));
    await Promise.all(env.direct.map((c) => c.script('FLUSH')));
    const results = await Promise.all((await Promise.all(locks.map((lock) => lock.release()))).map((answered) => answered.settled));
    expect(results.map((result) => result.deleted)).toEqual(locks.map(() => 5));
  });
});

describe('fence confirmations merged per batch', () => {
  it('sixteen fenced grants in one tick: one script call per batch of confirmations, fewer than the confirmations sent, each fence confirmed on a quorum, registers at least every fence they confirmed, a later fence above all', async () => {
    // Node timeouts of 1 s: a loaded machine's stalls do not read as timeout votes.
    // Fence rounds are what is merged here: no fence proposed with the grant (fence-ahead.ts).
    const { r, prefix } = await redlock('merge-fence', { nodeTimeoutMs: 1_000, fenceAhead: false });
    const { members, batches } = trackFenceBatches(r);
    let locks: Awaited<ReturnType<Redlock['acquire']>>[] = [];
    const calls = await scriptCallsDuring(async () => {
      locks = await Promise.all(names(16, 'g').map((name) => r.acquire(name, 10_000)));
      // Confirmations sent to nodes still pending at a grant's decision have run too.
      await waitFor(() => nodesOf(r).every((node) => node.pending === 0), 5_000, 'every node answering');
    });
    // A fenced grant of one resource sends one script: its fence confirmation (the grant is a plain
    // SET). The confirmations one batch carries go out as ONE script call, where separate calls
    // would make one per confirmation: the early voters of each grant, decided in the tick of the
    // reply that brought its quorum, and the nodes still pending are asked at its hedge.
    // Counted per batch, not against a fixed number: on a loaded machine the grants' decisions and
    // their hedges no longer all fall in one tick (one node ran 16 calls at load 12, one per hedge).
    expect(calls).toEqual(batches.map((b) => b.size));
    // ... and the merge was there to see: some batch carried several (normally the first on each
    // early voter carries all sixteen).
    expect(sum(members)).toBeGreaterThan(sum(calls));
    // (Fences order the grants of one resource; these sixteen resources may share a value.)
    const fences = locks.map((lock) => lock.fence!);
    // Every lock's fence is in the holder metadata on a quorum, and each node's register is at
    // least every fence it confirmed.
    const registers = await Promise.all(env.direct.map(async (c) => Number(await c.hget(epochKey(prefix), 'fence'))));
    for (const lock of locks) {
      const values = await Promise.all(env.direct.map((c) => c.get(r.lockKey(lock.resources[0]!))));
      const confirmed = values.map((v, i) => (v?.includes(`"fence":"${lock.fence}"`) ? i : -1)).filter((i) => i >= 0);
      expect(confirmed.length).toBeGreaterThanOrEqual(3);
      for (const i of confirmed) expect(registers[i]!).toBeGreaterThanOrEqual(lock.fence!);
    }
    await Promise.all(locks.map((lock) => lock.release()));
    const later = await r.acquire('g-0', 10_000);
    expect(later.fence!).toBeGreaterThan(Math.max(...fences));
    await later.release();
    expect(unhandled).toEqual([]);
  });

  it('fence-many.lua: a member whose key another token holds is refused (0) and writes nothing; the register goes to the highest confirmed fence, never down', async () => {
    const prefix = uniquePrefix('fence-many');
    const node = env.direct[0]!;
    const epoch = epochKey(prefix);
    const key = (name: string) => `${prefix}lock:${name}`;
    await node.hset(epoch, 'fence', '100');
    await node.set(key('a'), 'ta {"owner":"a"}', 'PX', 10_000);
    await node.set(key('b'), 'other {"owner":"x"}', 'PX', 10_000);
    await node.set(key('c'), 'tc', 'PX', 10_000);
    const members = [
      new FenceCall(epoch, [key('a')], 'ta', 150, '{"owner":"a","fence":"150"}'),
      // Its key belongs to another token: refused, though its fence is the highest.
      new FenceCall(epoch, [key('b')], 'tb', 900, '{"owner":"b","fence":"900"}'),
      new FenceCall(epoch, [key('c')], 'tc', 120, ''),
    ];
    const [, ...args] = decodeCommand(mergeFences(members).evalPayload());
    const reply = await node.call('EVAL', ...args);
    expect(reply).toEqual([1, 0, 1]);
    expect(await node.hget(epoch, 'fence')).toBe('150');
    expect(await node.get(key('a'))).toBe('ta {"owner":"a","fence":"150"}');
    expect(await node.get(key('b'))).toBe('other {"owner":"x"}');
    expect(await node.get(key('c'))).toBe('tc');
    // A register already above every member's fence is never lowered.
    await node.hset(epoch, 'fence', '1000');
    expect(await node.call('EVAL', ...args)).toEqual([1, 0, 1]);
    expect(await node.hget(epoch, 'fence')).toBe('1000');
    await node.del(epoch, key('a'), key('b'), key('c'));
  });
});
