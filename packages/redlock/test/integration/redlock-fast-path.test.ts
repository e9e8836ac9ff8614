import { describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { Redlock, type OperationEvent, type RedlockSettings } from '@redlock-console/redlock';
import type { LockNode, Reply } from '../../src/node';
import { FenceCall } from '../../src/fence-group';
import { epochKey } from '../../src/keys';
import { probeScript } from '../../src/grant-plan';
import { uniquePrefix } from '@/test/support/cluster';
import { NO_PERSISTENCE, startRedisNodes } from '@/test/support/redis-nodes';
import { redlockEnv } from '@/test/support/redlock-env';

// The per-grant cost of the safety checks: a fast probe of two plain commands
// in one transaction after the grants, and a fence round that asks the nodes still pending at the grant's decision
// only when the early voters may not be enough.

const env = redlockEnv();
const { redlocks, unhandled } = env;

async function redlock(
  name: string,
  settings: Partial<RedlockSettings> = {},
  urls: readonly string[] = env.cluster.urls,
): Promise<Redlock> {
  // 1 s per node unless a test says otherwise: no test here is about that deadline, and at a load of
  // 10 the default 100 ms read a stalled test process as nodes that did not answer (timeout votes).
  const r = new Redlock([...urls], { keyPrefix: uniquePrefix(name), retryCount: 0, nodeTimeoutMs: 1_000, ...settings });
  redlocks.push(r);
  await r.markNodesClean();
  await r.connect();
  return r;
}

function nodesOf(r: Redlock): LockNode[] {
  return (r as unknown as { nodes: LockNode[] }).nodes;
}

/**
 * Intercept the fence scripts the Redlock sends: `onFence` decides for each (true: send it as
 * usual). The nodes are real; only what this client sends is held back.
 */
function interceptFences(r: Redlock, onFence: (node: LockNode, reply: Reply) => boolean): void {
  for (const node of nodesOf(r)) {
    const callMerged = node.callMerged.bind(node);
    node.callMerged = (kind, merge, member, reply) => {
      if (!(member instanceof FenceCall) || onFence(node, reply)) callMerged(kind, merge, member, reply);
    };
  }
}

/** How many nodes hold the lock key with a fence in its metadata (the nodes its fence round confirmed on). */
async function confirmedOn(key: string): Promise<number> {
  const values = await Promise.all(env.direct.map((c) => c.get(key)));
  return values.filter((v) => v !== null && v.includes('"fence"')).length;
}

async function commandCalls(client: Redis): Promise<Map<string, number>> {
  const calls = new Map<string, number>();
  for (const line of (await client.info('commandstats')).split('\r\n')) {
    const m = /^cmdstat_([^:]+):calls=(\d+)/.exec(line);
    if (m) calls.set(m[1]!, Number(m[2]));
  }
  return calls;
}

describe('the fence round', () => {
  it('asks only the early voters when they all confirm: a fenced grant on five healthy nodes confirms on three', async () => {
    // The fence round is under test: no fence proposed with the grant (fence-ahead.ts).
    const r = await redlock('fence-quorum', { nodeTimeoutMs: 1_000, fenceAhead: false });
    const counts: number[] = [];
    for (let i = 0; i < 15; i++) {
      const lock = await r.acquire(`res-${i}`, 5_000);
      counts.push(await confirmedOn(r.lockKey(`res-${i}`)));
      await lock.release();
    }
    // Every grant confirmed on a quorum; most on exactly a quorum (a node may still be asked when a
    // loaded machine lets the fence round run past its hedge delay).
    expect(Math.min(...counts)).toBeGreaterThanOrEqual(3);
    counts.sort((a, b) => a - b);
    expect(counts[Math.floor(counts.length / 2)]).toBe(3);
  });

  it('an early voter that never answers its fence: the pending nodes are asked at the hedge, and the first attempt is granted long before nodeTimeoutMs', async () => {
    const r = await redlock('fence-stall', { nodeTimeoutMs: 3_000, fenceAhead: false });
    let stalled: LockNode | null = null;
    interceptFences(r, (node) => {
      if (stalled !== null) return true;
      stalled = node;
      return false; // never sent: this node stalls between the two rounds
    });
    const events: OperationEvent[] = [];
    r.on('acquire', (e) => events.push(e));
    const t0 = performance.now();
    const lock = await r.acquire('res', 10_000);
    const elapsed = performance.now() - t0;
    expect(stalled).not.toBeNull();
    expect(lock.fence).toBeGreaterThan(0);
    expect(events[0]!.attempts).toBe(1);
    // Without the hedge the round waits out nodeTimeoutMs (3 s) for the stalled node and fails.
    expect(elapsed).toBeLessThan(1_500);
    expect(await confirmedOn(r.lockKey('res'))).toBeGreaterThanOrEqual(3);
    await lock.release();
  });

  it('an early voter refusing its fence (the key gone there): the pending nodes are asked at once, not at the hedge', async () => {
    const r = await redlock('fence-refused', { nodeTimeoutMs: 3_000, fenceAhead: false });
    let fences = 0;
    let askedOnRefusal = -1;
    interceptFences(r, (_node, reply) => {
      fences++;
      if (fences > 1) return true;
      queueMicrotask(() => {
        const before = fences;
        reply(null, 0);
        // Fence scripts sent while the refusal was being handled: the pending nodes, asked at once.
        askedOnRefusal = fences - before;
      });
      return false;
    });
    const events: OperationEvent[] = [];
    r.on('acquire', (e) => events.push(e));
    const lock = await r.acquire('res', 60_000);
    expect(askedOnRefusal).toBeGreaterThanOrEqual(1);
    expect(events[0]!.attempts).toBe(1);
    expect(lock.fence).toBeGreaterThan(0);
    await lock.release();
  });
});

describe('the fast probe', () => {
  it('one transaction of plain commands after the grants, no script per acquire: a check only once per nodeCheckIntervalMs', async () => {
    // Node timeouts of 2 s: this counts commands, not latency (at 100 ms a loaded machine's first
    // grants, each bringing its node's check, read as five timeout votes).
    const r = await redlock('probe-cost', { nodeCheckIntervalMs: 60_000, nodeTimeoutMs: 2_000 });
    // The first grant on each node brings its check.
    await (
      await (await r.acquire('warm', 5_000, { fenced: false })).release()
    ).settled;
    const before = await Promise.all(env.direct.map(commandCalls));
    const n = 50;
    for (let i = 0; i < n; i++) {
      const lock = await r.acquire('res', 5_000, { fenced: false });
      // Every node's release has run before the counts are read (a release answers at a quorum).
      await (
        await lock.release()
      ).settled;
    }
    const after = await Promise.all(env.direct.map(commandCalls));
    for (let i = 0; i < env.direct.length; i++) {
      const delta = (name: string) => (after[i]!.get(name) ?? 0) - (before[i]!.get(name) ?? 0);
      // Each acquire: SET NX GET, then MULTI SCRIPT EXISTS HMGET EXISTS INFO TIME EXEC and a WATCH
      // on every node (the proof, the sentinel, the anchor, evicted_keys, the clock; the WATCH arms
      // the rollback detector for the next one); each release: one EVALSHA. No check (a script).
      expect(delta('set')).toBe(n);
      expect(delta('multi')).toBe(n);
      expect(delta('script|exists')).toBe(n);
      expect(delta('hmget')).toBe(n);
      expect(delta('exists')).toBe(n);
      expect(delta('time')).toBe(n);
      expect(delta('exec')).toBe(n);
      expect(delta('watch')).toBe(n);
      expect(delta('evalsha')).toBe(n);
      expect(delta('info')).toBe(n + 1); // INFO stats per probe, and our own INFO commandstats
    }
  });

  it('after SCRIPT FLUSH the proof fails and the node is checked again (the check reloads the probe), then the fast probe resumes', async () => {
    const r = await redlock('probe-flush', { nodeCheckIntervalMs: 60_000 });
    // Node 1 is needed for the quorum (a foreign key holds nodes 4 and 5): its own vote is seen.
    for (const i of [3, 4]) await env.direct[i]!.set(r.lockKey('res'), 'foreign', 'PX', 60_000);
    await (
      await (await r.acquire('res', 5_000)).release()
    ).settled;
    await env.direct[0]!.script('FLUSH');
    const before = await commandCalls(env.direct[0]!);
    const lock = await r.acquire('res', 5_000);
    expect(lock.votes[0]).toMatchObject({ vote: 'for' });
    await (
      await lock.release()
    ).settled;
    const mid = await commandCalls(env.direct[0]!);
    // The check ran: it EVALs the probe's source (loading it again) and runs INFO inside.
    const sha = probeScript(epochKey(r.settings.keyPrefix), '2', r.settings.maxTtlMs).sha;
    expect(await env.direct[0]!.script('EXISTS', sha)).toEqual([1]);
    expect((mid.get('info') ?? 0) - (before.get('info') ?? 0)).toBeGreaterThan(1);
    await (
      await (await r.acquire('res', 5_000)).release()
    ).settled;
    const after = await commandCalls(env.direct[0]!);
    expect((after.get('info') ?? 0) - (mid.get('info') ?? 0)).toBe(2); // the fast probe's INFO stats, and our own INFO commandstats
    expect((after.get('script|exists') ?? 0) - (mid.get('script|exists') ?? 0)).toBe(2); // the probe's, and ours
  });

  it("a node that refuses SCRIPT (renamed, as some proxies do) still votes: its fast probe is the probe script's own read", async () => {
    const nodes = await startRedisNodes(
      (i) => (i === 0 ? [...NO_PERSISTENCE, '--rename-command', 'SCRIPT', 'SCRIPT-HIDDEN'] : NO_PERSISTENCE),
      3,
    );
    try {
      const r = await redlock(
        'probe-no-script',
        { nodeCheckIntervalMs: 60_000 },
        nodes.map((n) => n.url),
      );
      // Node 2 is held by a foreign key: every grant needs node 1's own vote.
      await nodes[1]!.client.set(r.lockKey('res'), 'foreign', 'PX', 60_000);
      for (let i = 0; i < 5; i++) {
        const lock = await r.acquire('res', 5_000);
        expect(lock.votes[0]).toMatchObject({ vote: 'for' });
        // Settled: node 1 refuses SCRIPT LOAD, so its first release is an EVALSHA answered NOSCRIPT
        // and sent again as EVAL; an acquire sent before that would meet the old key there
        // (contended: liveness, release-round.ts), and here node 1's vote is the one needed.
        await (
          await lock.release()
        ).settled;
      }
      expect(nodesOf(r)[0]!.probeByProof).toBe(false);
      expect(nodesOf(r)[1]!.probeByProof).toBe(true);
    } finally {
      await Promise.all(nodes.map((n) => n.stop()));
    }
  });

  it('no unhandled rejections happened in this file', () => {
    expect(unhandled).toEqual([]);
  });
});
