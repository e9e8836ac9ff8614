import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Lock, LockContendedError, markNodeClean, readEpoch, Redlock, RedlockError, type RedlockSettings } from '@redlock-console/redlock';
import { uniquePrefix, waitFor } from '@/test/support/cluster';
import { holdOnMajority, markCleanLevel } from '@/test/support/majority';
import { DEFAULT_RDB, NO_PERSISTENCE, startRedisNode, type RedisNode } from '@/test/support/redis-nodes';
import { shiftedClock, type ShiftedClock } from '@/test/support/clock-shim';
import { nodeOf } from '../support/lock-node';
import { warmClocks } from '../support/clock-scene';
import { testBed } from '../support/test-bed';

// A node's lock data must never go back in time unnoticed, whatever moved it, and a node's clock
// must not move beyond the drift allowance unnoticed. Each case is a review's attack on real
// redis-server 7.0 processes: A holds a lock on exactly nodes 1–3 of 5; B is a warm client (it
// checked node 3 less than nodeCheckIntervalMs ago, so its next probe of node 3 is a fast one);
// node 3 then loses A's key without restarting. B must be refused, node 3 voting `quarantined`
// with the cause the core found. Without the detection (the core before this file) every case
// here gave B the lock while A held it: two holders.

const MAX_TTL = 6_000;
let nodes: RedisNode[] = [];
const bed = testBed({ maxTtlMs: MAX_TTL, retryCount: 0, nodeTimeoutMs: 2_000, nodeCheckIntervalMs: 60_000 }, { quietNodeErrors: true });
const client = bed.client;

/** Until `r`'s connection to node `index` is up again, a new one since `before` (its readySince then). */
async function reconnected(r: Redlock, index: number, before: number): Promise<void> {
  await waitFor(() => nodeOf(r, index).ready && nodeOf(r, index).readySince > before, 10_000, `a new connection to node ${index + 1}`);
}

/** A holds `res` on nodes 1–3; B is warm. `maxTtlMs`: the ceiling every client of the prefix uses. */
async function setUp(name: string, settings: Partial<RedlockSettings> = {}, maxTtlMs = MAX_TTL) {
  const prefix = uniquePrefix(name);
  const a = client(prefix, { maxTtlMs });
  const b = client(prefix, { maxTtlMs, ...settings });
  await markCleanLevel(a, prefix, nodes);
  await warmClocks(b, nodes);
  return { prefix, a, b };
}

/** B was refused while A holds, node 3 voting `quarantined` for `cause`. */
function expectRefused(outcome: Lock | Error, lockA: Lock, cause: string | RegExp): void {
  if (outcome instanceof Lock) {
    throw new Error(
      `two holders: B was granted (fence ${outcome.fence}, votes ${JSON.stringify(outcome.votes)}) while A holds (fence ${lockA.fence}, ${lockA.validityMs} ms of validity left)`,
    );
  }
  expect(outcome).toBeInstanceOf(LockContendedError);
  const votes = (outcome as RedlockError).votes;
  expect(votes[2], JSON.stringify(votes)).toMatchObject({ vote: 'against', reason: 'quarantined' });
  expect(lockA.validityMs).toBeGreaterThan(0);
  return void expect(votes[2]!.detail ?? '', JSON.stringify(votes)).toMatch(cause);
}

async function attempt(r: Redlock, resource = 'res', ttl = 2_000): Promise<Lock | Error> {
  return r.acquire(resource, ttl).catch((e: Error) => e);
}

/** Node 3's dump.rdb now (SAVE), copied aside: a backup of node 3 as it is at this moment. */
async function backupOf(node: RedisNode): Promise<string> {
  await node.client.save();
  const dir = mkdtempSync(join(tmpdir(), 'redlock-backup-'));
  copyFileSync(join(node.dir, 'dump.rdb'), join(dir, 'dump.rdb'));
  bed.onCleanup(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

describe('a node whose data goes back in time within one process', () => {
  it('restored in place: REPLICAOF a server loaded from an older backup of itself, then REPLICAOF NO ONE', async () => {
    nodes = await bed.start(() => NO_PERSISTENCE);
    // A lease of 14.5 s (a ceiling of 15 s): the sync below happens within it. With 5.5 s, a loaded
    // clean-clone run saw A's validity end during the sync, and B's grant was then no overlap.
    const ceiling = 15_000;
    const { a, b, prefix } = await setUp('restore-replicaof', {}, ceiling);
    const backup = await backupOf(nodes[2]!);
    // The backup server: a redis-server started from node 3's older dump (before A's lease starts:
    // on a loaded machine its start and the sync outlasted A's 5.5 s, and B's grant was no overlap).
    const side = await startRedisNode([...NO_PERSISTENCE, '--dir', backup, '--dbfilename', 'dump.rdb']);
    bed.onCleanup(() => side.stop());
    expect(await side.client.hget(`${prefix}epoch`, 'createdAt')).not.toBeNull();
    const lockA = await holdOnMajority(a, 'res', nodes, ceiling - 500);
    const n3 = nodes[2]!.client;
    await n3.replicaof('127.0.0.1', side.port);
    await waitFor(async () => /master_link_status:up/.test(await n3.info('replication')), 10_000, 'node 3 to sync');
    await n3.replicaof('NO', 'ONE');
    // A's key is gone from node 3: the backup predates it.
    expect(await n3.get(a.lockKey('res'))).toBeNull();
    expectRefused(await attempt(b), lockA, /back in time|replication sync/);
    // A client with no memory of node 3 is refused too: the quarantine is on the node.
    expectRefused(await attempt(client(prefix, { maxTtlMs: ceiling })), lockA, /.*/);
  });

  it('DEBUG RELOAD NOSAVE of an older dump: the same process, run_id and replication id', async () => {
    nodes = await bed.start((i) => (i === 2 ? [...NO_PERSISTENCE, '--enable-debug-command', 'yes'] : NO_PERSISTENCE));
    const { a, b, prefix } = await setUp('debug-reload');
    await nodes[2]!.client.save();
    const lockA = await holdOnMajority(a, 'res', nodes, 5_500);
    // The dump on disk is from before A's grant; reload it in place.
    await nodes[2]!.client.call('DEBUG', 'RELOAD', 'NOSAVE');
    expect(await nodes[2]!.client.get(a.lockKey('res'))).toBeNull();
    expectRefused(await attempt(b), lockA, /back in time/);
    expectRefused(await attempt(client(prefix)), lockA, /.*/);
  });

  it('DEBUG RELOAD seen by a client that never knew the node: the process counts its data-replacing commands', async () => {
    nodes = await bed.start((i) => (i === 2 ? [...NO_PERSISTENCE, '--enable-debug-command', 'yes'] : NO_PERSISTENCE));
    const { a, prefix } = await setUp('debug-reload-fresh');
    await nodes[2]!.client.save();
    const lockA = await holdOnMajority(a, 'res', nodes, 5_500);
    await nodes[2]!.client.call('DEBUG', 'RELOAD', 'NOSAVE');
    // Only a client that connects after the reload: no WATCH of its own saw it.
    const fresh = client(prefix);
    expectRefused(await attempt(fresh), lockA, /back in time/);
    expect((await readEpoch(nodes[2]!.client, prefix))?.cause).toBe('rollback');
  });

  it('a backup taken right after markNodesClean, before any check: the count of data-replacing commands is recorded by the mark-clean', async () => {
    nodes = await bed.start((i) => (i === 2 ? [...NO_PERSISTENCE, '--enable-debug-command', 'yes'] : NO_PERSISTENCE));
    const prefix = uniquePrefix('backup-after-mark');
    const a = client(prefix);
    await markCleanLevel(a, prefix, nodes);
    // The copy, before any client checked node 3.
    await nodes[2]!.client.save();
    const lockA = await holdOnMajority(a, 'res', nodes, 5_500);
    await nodes[2]!.client.call('DEBUG', 'RELOAD', 'NOSAVE');
    expectRefused(await attempt(client(prefix)), lockA, /back in time/);
  });

  it('SWAPDB into a database holding a second deployment with the same prefix and a lower register', async () => {
    nodes = await bed.start(() => NO_PERSISTENCE);
    const { a, b, prefix } = await setUp('swapdb');
    // The other deployment: same prefix, database 1 of node 3, its register far below ours.
    const other = nodes[2]!.client.duplicate({ db: 1 });
    bed.onCleanup(() => other.disconnect());
    await markNodeClean(other, { keyPrefix: prefix, maxTtlMs: MAX_TTL });
    await other.hset(`${prefix}epoch`, 'fence', '5');
    const lockA = await holdOnMajority(a, 'res', nodes, 5_500);
    const fenced = await a.acquire('fenced-res', 5_500);
    await nodes[2]!.client.swapdb(0, 1);
    expectRefused(await attempt(b), lockA, /back in time/);
    // Fences: once node 3's quarantine is over, a grant that counts node 3 is above every fence issued.
    await fenced.release();
    await lockA.release();
    const until = (await readEpoch(nodes[2]!.client, prefix))!.quarantineUntil;
    await waitFor(() => Date.now() > until + 50, MAX_TTL + 5_000, 'the end of the quarantine');
    for (const i of [0, 1]) await nodes[i]!.client.set(b.lockKey('after'), 'foreign', 'PX', 30_000);
    const lockB = await attempt(b, 'after');
    if (!(lockB instanceof Lock))
      throw new Error(
        `B refused after the quarantine: ${JSON.stringify((lockB as RedlockError).votes)}; ${JSON.stringify(await readEpoch(nodes[2]!.client, prefix))}`,
      );
    expect(lockB.votes[2]).toMatchObject({ vote: 'for' });
    expect(lockB.fence!).toBeGreaterThan(fenced.fence!);
  });
});

describe('a node that evicts keys between two checks', () => {
  it('maxmemory-policy allkeys-lru and a tiny maxmemory, filled, set back: the next grant sees evicted_keys grow', async () => {
    nodes = await bed.start(() => NO_PERSISTENCE);
    const { a, b } = await setUp('evict-window');
    const lockA = await holdOnMajority(a, 'res', nodes, 5_500);
    const n3 = nodes[2]!.client;
    const used = Number(/used_memory:(\d+)/.exec(await n3.info('memory'))![1]);
    await n3.config('SET', 'maxmemory-policy', 'allkeys-random');
    await n3.config('SET', 'maxmemory', String(used + 200_000));
    // Fill until A's key is evicted (random eviction: keep writing until it is gone).
    for (let i = 0; (await n3.exists(a.lockKey('res'))) === 1 && i < 200; i++) {
      const p = n3.pipeline();
      for (let j = 0; j < 200; j++) p.set(`filler:${i}:${j}`, 'x'.repeat(1_000));
      await p.exec().catch(() => null);
    }
    expect(await n3.exists(a.lockKey('res'))).toBe(0);
    await n3.config('SET', 'maxmemory', '0');
    await n3.config('SET', 'maxmemory-policy', 'noeviction');
    expectRefused(await attempt(b), lockA, /evicted|lost its data/);
  });
});

describe('a node whose clock jumps', () => {
  let clock: ShiftedClock;
  async function clockNodes(): Promise<void> {
    clock = shiftedClock();
    nodes = await bed.start(
      () => NO_PERSISTENCE,
      5,
      (i) => (i === 2 ? clock.env : {}),
    );
  }

  it("forward by 10 s mid-hold (Kleppmann's counterexample): A's key expires early on node 3, B is refused", async () => {
    await clockNodes();
    const { a, b, prefix } = await setUp('clock-forward', { nodeCheckIntervalMs: 60_000 });
    const lockA = await holdOnMajority(a, 'res', nodes, 5_000);
    clock.set(10_000);
    // Redis expires keys lazily on access and in its cycle: A's key on node 3 is gone by its clock.
    await waitFor(async () => (await nodes[2]!.client.exists(a.lockKey('res'))) === 0, 3_000, "A's key to expire on node 3");
    expectRefused(await attempt(b), lockA, /clock/);
    expect((await readEpoch(nodes[2]!.client, prefix))?.cause).toBe('clock-jump');
  });

  it("forward by 10 s while B's connection to node 3 was down: B's readings from before the reconnect still count", async () => {
    await clockNodes();
    const { a, b, prefix } = await setUp('clock-reconnect', { nodeCheckIntervalMs: 60_000 });
    const lockA = await holdOnMajority(a, 'res', nodes, 5_000);
    const n3 = nodes[2]!.client;
    // A network blip: every client connection of node 3 but the test's own is dropped; B reconnects.
    const before = nodeOf(b, 2).readySince;
    await n3.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
    await reconnected(b, 2, before);
    clock.set(10_000);
    await waitFor(async () => (await n3.exists(a.lockKey('res'))) === 0, 3_000, "A's key to expire on node 3");
    // B's monotonic clock and node 3's wall clock did not change with the TCP connection: the jump
    // is measured against the readings B took before it, not taken for a new baseline.
    expectRefused(await attempt(b), lockA, /clock/);
    expect((await readEpoch(n3, prefix))?.cause).toBe('clock-jump');
  });

  it('a crash, a restart from an older snapshot, then the clock 10 s ahead: the restart quarantine runs from the jump, not from the process start', async () => {
    clock = shiftedClock();
    nodes = await bed.start(
      () => DEFAULT_RDB,
      5,
      (i) => (i === 2 ? clock.env : {}),
    );
    const { a, b, prefix } = await setUp('clock-restart');
    // The snapshot node 3 comes back with: its sentinel, from before A's lease.
    await nodes[2]!.client.save();
    const lockA = await holdOnMajority(a, 'res', nodes, 5_500);
    const before = nodeOf(b, 2).readySince;
    await nodes[2]!.crash();
    await nodes[2]!.start();
    await reconnected(b, 2, before);
    // INFO's uptime counts on the wall clock: after the jump the process reads as started 10 s
    // earlier, and a quarantine until that start + the ceiling (6 s) would be over already. B read
    // node 3's clock before the crash: its first reading of the new process shows the jump.
    clock.set(10_000);
    const n3 = nodes[2]!.client;
    expectRefused(await attempt(b), lockA, /restart|clock|quarantine/);
    // The check that finds the restart quarantines it until start + ceiling; the jump B measured then
    // starts a clock-jump quarantine from now (the later cause is the one recorded).
    const epoch = (await readEpoch(n3, prefix))!;
    expect(epoch.cause).toBe('clock-jump');
    // On the node's clock, a full ceiling from now: every lease A was granted before the jump ends
    // by then, whatever the jump moved.
    const nodeNow = (await n3.time()).map(Number)[0]! * 1_000;
    expect(epoch.quarantineUntil).toBeGreaterThan(nodeNow + MAX_TTL - 1_500);
    // And for a client that never read node 3 before: the quarantine is on the node.
    expectRefused(await attempt(client(prefix)), lockA, /.*/);
  });

  it('backward by an hour: refused as well (it would move the fence floor and every quarantine on that node)', async () => {
    await clockNodes();
    const { b, prefix } = await setUp('clock-backward');
    // Nodes 4 and 5 refuse (a foreign key): node 3's own vote decides.
    for (const i of [3, 4]) await nodes[i]!.client.set(b.lockKey('other'), 'foreign', 'PX', 30_000);
    clock.set(-3_600_000);
    const outcome = await attempt(b, 'other');
    const votes = outcome instanceof Lock ? outcome.votes : (outcome as RedlockError).votes;
    expect(votes[2], JSON.stringify(votes)).toMatchObject({ vote: 'against', reason: 'quarantined' });
    expect((await readEpoch(nodes[2]!.client, prefix))?.cause).toBe('clock-jump');
  });

  it('an hour behind from the start, then a data loss: the register is reseeded from the other nodes, not from its clock', async () => {
    await clockNodes();
    clock.set(-3_600_000);
    const { a, b, prefix } = await setUp('clock-behind-loss');
    // A: a fenced lock on nodes 1–3; their registers now hold A's fence, nodes 4 and 5 less.
    const lockA = await holdOnMajority(a, 'res', nodes, 1_000);
    await lockA.release();
    // Nodes 4 and 5 never saw A's fence (A was confirmed on nodes 1–3 only; B's warm-up may have
    // raised them: put them back below it).
    for (const i of [3, 4]) await nodes[i]!.client.hset(`${prefix}epoch`, 'fence', String(lockA.fence! - 10));
    // Node 3 loses everything; B's next grant (unfenced: no register moves) finds it: a data-loss
    // quarantine, its register floored from node 3's clock.
    await nodes[2]!.client.flushall();
    await b.acquire('other', 1_000, { fenced: false }).then(
      (l) => l.release(),
      () => null,
    );
    // The grant may be decided by nodes 1, 2, 4 and 5 before node 3's check (the one that writes the
    // quarantine) has answered: wait for it rather than read once.
    await waitFor(async () => (await readEpoch(nodes[2]!.client, prefix))?.cause === 'data-loss', 5_000, "node 3's data-loss quarantine");
    const epoch = await readEpoch(nodes[2]!.client, prefix);
    expect(epoch!.fence).toBeLessThan(lockA.fence!);
    // Once the quarantine is over, a grant that counts node 3 (nodes 1 and 2 refuse it) must get a
    // fence above A's: node 3's register first comes up to the other nodes' (a reseed).
    await waitFor(
      async () => (await nodes[2]!.client.time()).map(Number)[0]! * 1000 > epoch!.quarantineUntil + 50,
      MAX_TTL + 5_000,
      "the end of node 3's quarantine",
    );
    for (const i of [0, 1]) await nodes[i]!.client.set(b.lockKey('after'), 'foreign', 'PX', 30_000);
    const granted: Lock[] = [];
    await waitFor(
      async () => {
        const outcome = await attempt(b, 'after');
        if (outcome instanceof Lock) granted.push(outcome);
        return granted.length > 0;
      },
      5_000,
      'B to be granted with node 3',
    );
    expect(granted[0]!.votes[2]).toMatchObject({ vote: 'for' });
    expect(granted[0]!.fence!).toBeGreaterThan(lockA.fence!);
  });

  it('a clock that stays put is never flagged: 200 grants over a loaded second, no quarantine', async () => {
    await clockNodes();
    const { b, prefix } = await setUp('clock-steady', { nodeCheckIntervalMs: 100 });
    const locks = await Promise.all(Array.from({ length: 200 }, (_, i) => b.acquire(`steady-${i}`, 2_000)));
    for (const lock of locks)
      expect(
        lock.votes.filter((v) => v.reason === 'quarantined'),
        JSON.stringify(lock.votes),
      ).toEqual([]);
    await Promise.all(locks.map((l) => l.release()));
    for (const n of nodes) expect((await readEpoch(n.client, prefix))?.cause).toBeUndefined();
  });
});
