import { describe, expect, it } from 'vitest';
import {
  Lock,
  LockContendedError,
  MaxTtlMismatchError,
  QuorumUnavailableError,
  readEpoch,
  RedlockError,
  readFenceRegister,
  Redlock,
} from '@redlock-console/redlock';
import { uniquePrefix, waitFor } from '@/test/support/cluster';
import { Redis } from 'ioredis';
import { holdOnMajority as holdOnMajorityOf, markCleanLevel } from '@/test/support/majority';
import { AOF_ALWAYS, DEFAULT_RDB, NO_PERSISTENCE, type RedisNode } from '@/test/support/redis-nodes';
import { startStickyProxy, type StickyProxy } from '@/test/support/sticky-proxy';
import { testBed } from '../support/test-bed';

// The losses a real Redis has that leave the epoch sentinel in place: a restart from an
// older RDB snapshot (Redis's default persistence), a restart into an AOF older than a period run
// without persistence, eviction, and a client with a shorter maxTtlMs. Each test builds the
// situation in which the unprotected core gives two holders of one resource at once or a later
// grant with a lower fence, and shows the core refusing instead. A lock held on exactly nodes 1–3
// (a bare majority, the case of the distlock page's crash-recovery argument) is made by having
// nodes 4 and 5 refuse it (a foreign key there), then removing the foreign key.

// Long enough that a crash, a restart and a probe fit inside it on a loaded CI machine: a check later
// than the restart + ceiling rightly finds nothing left to quarantine.
const MAX_TTL = 6_000;
/** These tests are about what a restart leaves behind, not latency: a reply late on a loaded machine is not a vote lost. */
const NODE_TIMEOUT = 1_000;
let nodes: RedisNode[] = [];
const bed = testBed({ maxTtlMs: MAX_TTL, retryCount: 0, nodeTimeoutMs: NODE_TIMEOUT });
const client = bed.client;

/**
 * B's attempt, once node 3 answers at all: a restarted node refuses connections for a moment, and on
 * a loaded machine B's first contact (a full check) can answer after the node timeout or after the
 * round was decided without it (a timeout or pending vote, in a refusal or a grant): asked again
 * until node 3's own vote is in.
 */
const markClean = (a: Redlock, prefix: string) => markCleanLevel(a, prefix, nodes);
const holdOnMajority = (a: Redlock, resource: string) => holdOnMajorityOf(a, resource, nodes, MAX_TTL);

async function attempt(b: Redlock, resource: string): Promise<Lock | Error> {
  let outcome: Lock | Error = new Error('no attempt');
  await waitFor(
    async () => {
      outcome = await b.acquire(resource, 1_000).catch((e: Error) => e);
      // A grant too can be decided before node 3 answers (four other nodes are a quorum): its
      // check may then not have written yet. Given back, and asked again.
      const votes = outcome instanceof Lock || outcome instanceof RedlockError ? outcome.votes : [];
      const answered = !/^(error|timeout|pending)$/.test(votes[2]?.reason ?? '');
      if (!answered && outcome instanceof Lock) await outcome.release().catch(() => undefined);
      return answered;
    },
    5_000,
    'node 3 to answer',
  );
  return outcome;
}

/**
 * B was refused, node `node` voting against for `reason`. A still holds nodes 1 and 2, which
 * would have made B's quorum with node 3 had it voted for: that is contention (LockContendedError),
 * with the quarantine among its votes.
 */
function expectRefusedBy(outcome: Lock | Error, node: number, reason: string): void {
  expect(outcome).toBeInstanceOf(LockContendedError);
  expect((outcome as LockContendedError).votes[node]).toMatchObject({ vote: 'against', reason });
}

describe('restarts that reload older data are quarantined (restart detection)', () => {
  it("a crash and restart from an older RDB snapshot (default persistence): B is refused while A holds, and later fences exceed A's", async () => {
    nodes = await bed.start(() => DEFAULT_RDB);
    const prefix = uniquePrefix('rdb');
    const a = client(prefix);
    await markClean(a, prefix);
    const first = await a.acquire('res', MAX_TTL);
    await first.release();
    // The snapshot the node will come back with: an older sentinel and register, before A's lock.
    await nodes[2]!.client.save();
    const lockA = await holdOnMajority(a, 'res');
    await nodes[2]!.crash();
    await nodes[2]!.start();
    expect(await nodes[2]!.client.get(a.lockKey('res'))).toBeNull(); // A's key is gone, the sentinel is back
    expect(await readEpoch(nodes[2]!.client, prefix)).not.toBeNull();

    const events: string[] = [];
    const b = client(prefix);
    b.on('quarantine', (e) => events.push(`${e.node}:${e.cause ?? '?'}`));
    const refused = await attempt(b, 'res');
    expectRefusedBy(refused, 2, 'quarantined');
    expect(lockA.validityMs).toBeGreaterThan(0); // A still holds: refusing B keeps it exclusive
    expect(events).toContain('3:restart'); // node 3 = nodes[2]
    const epoch = await readEpoch(nodes[2]!.client, prefix);
    expect(epoch).toMatchObject({ cause: 'restart', origin: 'quarantine' });
    // It sits out until its process start + maxTtlMs (the distlock page's delayed restart).
    expect(epoch!.quarantineUntil - epoch!.serverStartedAt!).toBe(MAX_TTL);

    // Once A is gone and the quarantine over, B's fence is above A's: the register was reseeded.
    await lockA.release();
    await waitFor(() => Date.now() > epoch!.quarantineUntil + 50, MAX_TTL + 1_000, 'the end of the quarantine');
    const lockB = await b.acquire('res', 1_000);
    expect(lockB.fence!).toBeGreaterThan(lockA.fence!);
    expect(await readFenceRegister(nodes[2]!.client, prefix)).toBeGreaterThanOrEqual(lockB.fence!);
    await lockB.release();
  });

  it('the restart quarantine never ends before crash + maxTtlMs, though INFO counts uptime in whole seconds', async () => {
    nodes = await bed.start(() => DEFAULT_RDB);
    const prefix = uniquePrefix('uptime');
    // A ceiling far above the crash-to-probe time on a loaded machine: a probe later than the
    // process start + ceiling rightly finds nothing to quarantine (probe.lua), which a 3 s ceiling
    // let a busy CI run reach (cause undefined).
    const ceiling = 30_000;
    const a = client(prefix, { maxTtlMs: ceiling });
    await markClean(a, prefix);
    await nodes[2]!.client.save();
    // Crash late in a wall-clock second and look just after the next one begins: uptime then
    // reads 0 or 1 while the process is only a few hundred ms old, the case where now - uptime
    // lands before the real start.
    await waitFor(() => Date.now() % 1_000 >= 750 && Date.now() % 1_000 < 800, 2_000, 'late in a second');
    const crashAt = Date.now();
    await nodes[2]!.crash();
    await nodes[2]!.start();
    // pace: into the next second: the restarted process reads 1 s of uptime
    await new Promise((res) => setTimeout(res, 1_100 - (Date.now() % 1_000)));
    const b = client(prefix, { maxTtlMs: ceiling });
    await attempt(b, 'probe');
    // The check that found the restart wrote its quarantine before node 3's vote was read (one script).
    const epoch = (await readEpoch(nodes[2]!.client, prefix))!;
    expect(epoch.cause).toBe('restart');
    expect(epoch.quarantineUntil).toBeGreaterThanOrEqual(crashAt + ceiling);
  });

  it('a restart into an AOF written before a period without persistence: the grants of that period are not forgotten', async () => {
    nodes = await bed.start(() => AOF_ALWAYS);
    const prefix = uniquePrefix('aof');
    const a = client(prefix, { maxTtlMs: 2_000 });
    await a.markNodesClean();
    // The console's "crash, start without persistence": the node comes back empty, is quarantined
    // for the data loss, then serves.
    await nodes[2]!.crash();
    await nodes[2]!.start(NO_PERSISTENCE);
    await waitFor(
      async () => {
        await a.acquire('warm', 200, { fenced: false }).then(
          (l) => l.release(),
          () => null,
        );
        const e = await readEpoch(nodes[2]!.client, prefix);
        return e !== null && e.cause === 'data-loss' && Date.now() > e.quarantineUntil + 20;
      },
      6_000,
      'node 3 quarantined and back',
    );
    // A takes its lock during the period without persistence, on a majority that includes node 3.
    const lockA = await client(prefix, { maxTtlMs: 2_000 }).acquire('res', 2_000);
    // The acquire decides at its quorum: wait for its last SETs, then take nodes 4 and 5 out of it.
    await waitFor(
      async () => (await Promise.all(nodes.map((n) => n.client.exists(a.lockKey('res'))))).every((x) => x === 1),
      1_000,
      "A's keys",
    );
    for (const i of [3, 4]) await nodes[i]!.client.del(a.lockKey('res'));
    // Then "restart with aof-always": the node loads the AOF written before the crash, whose
    // sentinel is clean, and knows nothing of A.
    await nodes[2]!.crash();
    await nodes[2]!.start(AOF_ALWAYS);
    expect(await nodes[2]!.client.get(a.lockKey('res'))).toBeNull();
    expect(await readEpoch(nodes[2]!.client, prefix)).toMatchObject({ origin: 'clean' });

    const b = client(prefix, { maxTtlMs: 2_000 });
    const refused = await attempt(b, 'res');
    expectRefusedBy(refused, 2, 'quarantined');
    expect(lockA.validityMs).toBeGreaterThan(0);
    expect(await readEpoch(nodes[2]!.client, prefix)).toMatchObject({ cause: 'restart' });
  });

  it("negative control, nodeChecks: false: the RDB restart gives B the lock A holds, with a fence not above A's", async () => {
    nodes = await bed.start(() => DEFAULT_RDB);
    const prefix = uniquePrefix('rdb-unsafe');
    const a = client(prefix);
    await markClean(a, prefix);
    await (await a.acquire('res', MAX_TTL)).release();
    await nodes[2]!.client.save();
    const lockA = await holdOnMajority(a, 'res');
    await nodes[2]!.crash();
    await nodes[2]!.start();
    // B's fence from the registers alone: a fence proposed from B's clock (fence-ahead.ts) would be
    // above A's here, by the clock's luck, not by anything the nodes ensure.
    const b = client(prefix, { nodeChecks: false, fenceAhead: false });
    const lockB = await attempt(b, 'res');
    // The violation the detection exists to prevent: two holders, and B's fence is not above A's.
    expect(lockB).toBeInstanceOf(Lock);
    expect(lockA.validityMs).toBeGreaterThan(0);
    expect((lockB as Lock).fence!).toBeLessThanOrEqual(lockA.fence!);
  });
});

describe('restart detection does not rely on the connection dropping', () => {
  /**
   * Node 3 behind a proxy that keeps the client's socket open when its upstream restarts and
   * redials behind it (twemproxy-like). B's connection to it is opened before the restart and
   * never closes: no reconnect, no 'ready' event tells B anything.
   */
  async function behindStickyProxy(nodeChecks: boolean) {
    nodes = await bed.start(() => DEFAULT_RDB);
    const proxy: StickyProxy = await startStickyProxy(nodes[2]!.port);
    bed.onCleanup(() => proxy.close());
    const prefix = uniquePrefix(nodeChecks ? 'sticky' : 'sticky-unsafe');
    const a = client(prefix);
    await markClean(a, prefix);
    const clients = nodes.map((n, i) => new Redis(i === 2 ? proxy.port : n.port, '127.0.0.1', { maxRetriesPerRequest: 0 }));
    bed.onCleanup(() => clients.forEach((c) => c.disconnect()));
    let closes = 0;
    clients[2]!.on('close', () => closes++);
    const b = new Redlock(clients, { keyPrefix: prefix, maxTtlMs: MAX_TTL, retryCount: 0, nodeTimeoutMs: NODE_TIMEOUT, nodeChecks });
    bed.track(b);
    // B has checked every node (it knows node 3's process) before anything happens.
    await (await b.acquire('warm', 500)).release();
    await nodes[2]!.client.save();
    const lockA = await holdOnMajority(a, 'res');
    await nodes[2]!.crash();
    await nodes[2]!.start();
    const outcome = await b.acquire('res', 1_000).catch((e: Error) => e);
    expect(closes).toBe(0);
    expect(proxy.upstreamConnections).toBe(2); // one before the restart, one redialled after it
    return { lockA, outcome, prefix };
  }

  it("B's socket stays open across node 3's restart from an old snapshot, and B still refuses it (NOSCRIPT: the process never ran a check)", async () => {
    const { lockA, outcome, prefix } = await behindStickyProxy(true);
    expectRefusedBy(outcome, 2, 'quarantined');
    expect((outcome as LockContendedError).votes[2]!.detail).toMatch(/restarted/);
    expect(lockA.validityMs).toBeGreaterThan(0);
    expect(await readEpoch(nodes[2]!.client, prefix)).toMatchObject({ cause: 'restart' });
  });

  it('negative control, nodeChecks: false: through the same proxy B is granted the lock A holds', async () => {
    const { lockA, outcome } = await behindStickyProxy(false);
    expect(outcome).toBeInstanceOf(Lock);
    expect(lockA.validityMs).toBeGreaterThan(0);
  });
});

describe('eviction', () => {
  it('a node whose maxmemory-policy can evict votes against (unsafe-eviction); with three such nodes no quorum', async () => {
    const policies = [null, null, 'volatile-lru', 'allkeys-random', 'volatile-ttl'];
    nodes = await bed.start((i) =>
      policies[i] ? [...NO_PERSISTENCE, '--maxmemory', '64mb', '--maxmemory-policy', policies[i]!] : NO_PERSISTENCE,
    );
    const prefix = uniquePrefix('evict');
    const a = client(prefix);
    await a.markNodesClean();
    const refused = await a.acquire('res', 1_000).catch((e: Error) => e);
    expect(refused).toBeInstanceOf(QuorumUnavailableError);
    const votes = (refused as QuorumUnavailableError).votes;
    expect(votes[2]).toMatchObject({ vote: 'against', reason: 'unsafe-eviction' });
    expect(votes[3]).toMatchObject({ vote: 'against', reason: 'unsafe-eviction' });
    expect(votes[4]).toMatchObject({ vote: 'against', reason: 'unsafe-eviction' });
    expect(votes[2]!.detail).toContain('volatile-lru');
    // Fixed at run time: the next check (nodeCheckIntervalMs) sees noeviction and nothing evicted.
    for (const i of [2, 3, 4]) await nodes[i]!.client.config('SET', 'maxmemory-policy', 'noeviction');
    const b = client(prefix, { nodeCheckIntervalMs: 10 });
    const lock = await b.acquire('res', 1_000);
    expect(lock.votes.filter((v) => v.vote === 'for').length).toBeGreaterThanOrEqual(3);
    await lock.release();
  });

  it('keys evicted between two checks (a CONFIG SET there and back) start a quarantine: a held lock key evicted is not granted again', async () => {
    nodes = await bed.start(() => NO_PERSISTENCE);
    const prefix = uniquePrefix('evicted');
    const a = client(prefix, { nodeCheckIntervalMs: 10 });
    await a.markNodesClean();
    const lockA = await holdOnMajority(a, 'res');
    // Between two checks: node 3 evicts A's key (volatile-lru under memory pressure), then the
    // policy is put back. The sentinel (no TTL) survives a volatile-* eviction.
    const n = nodes[2]!.client;
    await n.config('SET', 'maxmemory-policy', 'volatile-lru');
    const used = Number(/used_memory:(\d+)/.exec(await n.info('memory'))![1]);
    await n.config('SET', 'maxmemory', String(used + 256 * 1024));
    for (let i = 0; i < 40 && (await n.exists(a.lockKey('res'))) === 1; i++) {
      const pipeline = n.pipeline();
      for (let k = 0; k < 200; k++) pipeline.set(`filler:${i}:${k}`, 'x'.repeat(1_024), 'PX', 60_000);
      await pipeline.exec().catch(() => undefined);
    }
    expect(await n.exists(a.lockKey('res'))).toBe(0);
    expect(await readEpoch(n, prefix)).not.toBeNull();
    await n.config('SET', 'maxmemory', '0');
    await n.config('SET', 'maxmemory-policy', 'noeviction');

    const b = client(prefix, { nodeCheckIntervalMs: 10 });
    const refused = await attempt(b, 'res');
    expectRefusedBy(refused, 2, 'quarantined');
    expect(lockA.validityMs).toBeGreaterThan(0);
    expect(await readEpoch(n, prefix)).toMatchObject({ cause: 'eviction' });
  });
});

describe('one lease ceiling for the cluster', () => {
  it("a client with a shorter maxTtlMs gets MaxTtlMismatchError, and never starts a quarantine shorter than the cluster's", async () => {
    nodes = await bed.start(() => NO_PERSISTENCE);
    const prefix = uniquePrefix('ceiling');
    const a = client(prefix);
    await a.markNodesClean();
    const lockA = await holdOnMajority(a, 'res');
    // Node 3 loses its data; the first client to see it has maxTtlMs 500.
    await nodes[2]!.client.flushall();
    const short = client(prefix, { maxTtlMs: 500 });
    const mismatch = await short.acquire('other', 400).catch((e: Error) => e);
    expect(mismatch).toBeInstanceOf(MaxTtlMismatchError);
    expect(mismatch).toMatchObject({ recordedMaxTtlMs: MAX_TTL, clientMaxTtlMs: 500 });
    // It wrote no quarantine of 500 ms: the node has no sentinel until a client with the
    // cluster's ceiling finds the loss.
    // absence: 600 ms, past a 500 ms quarantine it must not have written
    await new Promise((res) => setTimeout(res, 600));
    const b = client(prefix);
    const refused = await attempt(b, 'res');
    expectRefusedBy(refused, 2, 'quarantined');
    expect(lockA.validityMs).toBeGreaterThan(0);
    await waitFor(async () => (await readEpoch(nodes[2]!.client, prefix)) !== null, 1_000, 'the quarantine');
    const epoch = (await readEpoch(nodes[2]!.client, prefix))!;
    expect(epoch).toMatchObject({ cause: 'data-loss', maxTtlMs: MAX_TTL });
    expect(epoch.quarantineUntil - epoch.createdAt).toBe(MAX_TTL);
  });
});
