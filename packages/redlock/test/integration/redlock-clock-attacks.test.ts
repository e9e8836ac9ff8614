import { describe, expect, it } from 'vitest';
import { Lock, LockContendedError, readEpoch, RedlockError, type RedlockSettings } from '@redlock-console/redlock';
import { uniquePrefix, waitFor } from '@/test/support/cluster';
import { holdOnMajority, markCleanLevel } from '@/test/support/majority';
import { DEFAULT_RDB, NO_PERSISTENCE, type RedisNode } from '@/test/support/redis-nodes';
import { shiftedClock, type ShiftedClock } from '@/test/support/clock-shim';
import { startTwemproxy } from '@/test/support/twemproxy';
import { nodeOf } from '../support/lock-node';
import { attemptAnswered, keyGone, warmClocks } from '../support/clock-scene';
import { testBed } from '../support/test-bed';

// A hostile review of the clock check (clock-check.ts) after a reconnection dropped its readings
// (redlock-rollback.test.ts, "while B's connection to node 3 was down"): attacks it withstands, each
// on a path no other test takes. A holds `res` on exactly nodes 1–3 of 5; node 3's wall clock is
// moved (test/support/clock-shim.ts) so that A's key there expires early; B, a client with readings
// of node 3, must be refused while A holds, node 3 voting `quarantined`. Mutual exclusion is the
// property under attack; fence order is not (a clock-jump quarantine only takes votes away and
// raises the register to its floor, probe.lua).

const MAX_TTL = 6_000;
let nodes: RedisNode[] = [];
let clock: ShiftedClock;
const bed = testBed({ maxTtlMs: MAX_TTL, retryCount: 0, nodeTimeoutMs: 2_000, nodeCheckIntervalMs: 60_000 }, { quietNodeErrors: true });

interface Scene {
  /** The ceiling every client of the prefix uses. */
  ceiling?: number;
  persistence?: readonly string[];
  /** Node 3 reached only through twemproxy (nutcracker), which keeps a client's socket across an upstream restart. */
  proxied?: boolean;
  /** Node 3's clock off real time by this much from its start. */
  offsetMs?: number;
}

/** Five nodes, node 3's clock movable; A and B warm on one prefix, B with `settingsB`. */
async function scene(name: string, settingsB: Partial<RedlockSettings> = {}, s: Scene = {}) {
  const ceiling = s.ceiling ?? MAX_TTL;
  clock = shiftedClock();
  clock.set(s.offsetMs ?? 0);
  nodes = await bed.start(
    () => s.persistence ?? NO_PERSISTENCE,
    5,
    (i) => (i === 2 ? clock.env : {}),
  );
  const targets = nodes.map((n) => n.url);
  if (s.proxied) {
    const proxy = await startTwemproxy(nodes[2]!.port);
    bed.onCleanup(() => proxy.stop());
    targets[2] = proxy.url;
  }
  const prefix = uniquePrefix(name);
  const a = bed.client(prefix, { maxTtlMs: ceiling }, targets);
  const b = bed.client(prefix, { maxTtlMs: ceiling, ...settingsB }, targets);
  await markCleanLevel(a, prefix, nodes);
  await warmClocks(a, nodes);
  await warmClocks(b, nodes);
  return { prefix, a, b };
}

/** B was refused while A holds, node 3 voting `quarantined` for `cause`. */
function expectRefused(outcome: Lock | Error, lockA: Lock, cause: RegExp): void {
  if (outcome instanceof Lock) {
    throw new Error(`two holders: B was granted (votes ${JSON.stringify(outcome.votes)}) while A holds (${lockA.validityMs} ms left)`);
  }
  expect(outcome).toBeInstanceOf(LockContendedError);
  const votes = (outcome as RedlockError).votes;
  expect(votes[2], JSON.stringify(votes)).toMatchObject({ vote: 'against', reason: 'quarantined' });
  expect(votes[2]!.detail ?? '', JSON.stringify(votes)).toMatch(cause);
  expect(lockA.validityMs).toBeGreaterThan(0);
}

/** Node 3's wall clock (ms), as its TIME reads it. */
async function nodeMs(n: RedisNode): Promise<number> {
  const [s, us] = (await n.client.time()).map(Number);
  return s! * 1_000 + us! / 1_000;
}

describe('attacks on the clock check that it withstands', () => {
  it('a second jump during a clock-jump quarantine, read by a probe in between: a new quarantine from the second jump', async () => {
    // The first quarantine lasts the ceiling on node 3's clock; a second step forward shortens it
    // in real time by as much, so the second step must be seen as well (against the baseline B
    // took after the first quarantine was written).
    const ceiling = 15_000;
    const { a, b, prefix } = await scene('second-jump', {}, { ceiling });
    const lockA = await holdOnMajority(a, 'res', nodes, ceiling - 500);
    const n3 = nodes[2]!;
    clock.set(20_000);
    await keyGone(a, n3);
    expectRefused(await attemptAnswered(b), lockA, /clock/);
    const first = (await readEpoch(n3.client, prefix))!;
    expect(first.cause).toBe('clock-jump');
    // B's next probe of node 3 (quarantined: against) is its new baseline.
    const other = await attemptAnswered(b, 'other');
    const votes = other instanceof Lock || other instanceof RedlockError ? other.votes : [];
    expect(votes[2], JSON.stringify(votes)).toMatchObject({ vote: 'against', reason: 'quarantined' });
    if (other instanceof Lock) await (await other.release()).settled;
    expect(nodeOf(b, 2).clock.last).not.toBeNull();
    clock.set(25_000);
    expectRefused(await attemptAnswered(b), lockA, /clock/);
    const second = (await readEpoch(n3.client, prefix))!;
    expect(second.quarantineUntil).toBeGreaterThan(first.quarantineUntil + 4_000);
    // After the first quarantine's end on node 3's clock (5 s early in real time), A still holds: refused.
    await waitFor(async () => (await nodeMs(n3)) > first.quarantineUntil + 50, ceiling, 'the end of the first quarantine');
    expectRefused(await attemptAnswered(b), lockA, /clock/);
  }, 60_000);

  it('B idle for 25 s with the default driftFactor (an allowance of 252 ms), then node 3 forward by 10 s: refused', async () => {
    // The allowance grows with the time since B's last reading (1 % of it): after 25 s, 252 ms.
    const { a, b, prefix } = await scene('idle-25s');
    const since = nodeOf(b, 2).clock.last!.at;
    await waitFor(() => performance.now() - since > 25_000, 35_000, 'B idle for 25 s');
    const lockA = await holdOnMajority(a, 'res', nodes, 5_000);
    clock.set(10_000);
    await keyGone(a, nodes[2]!);
    expectRefused(await attemptAnswered(b), lockA, /clock/);
    expect((await readEpoch(nodes[2]!.client, prefix))?.cause).toBe('clock-jump');
  }, 60_000);

  it("behind twemproxy: the upstream crashes, restarts from an older snapshot and its clock goes 10 s ahead, B's socket to the proxy open throughout", async () => {
    const { a, b, prefix } = await scene('proxy-restart-jump', {}, { persistence: DEFAULT_RDB, proxied: true });
    const n3 = nodes[2]!;
    expect(nodeOf(b, 2).proxySafe).toBe(true);
    // The snapshot the upstream comes back with: its sentinel, from before A's lease.
    await n3.client.save();
    const lockA = await holdOnMajority(a, 'res', nodes, 5_500);
    const socket = nodeOf(b, 2).readySince;
    await n3.crash();
    await n3.start();
    clock.set(10_000);
    expect(await n3.client.get(a.lockKey('res'))).toBeNull();
    // The upstream's uptime counts on its wall clock: it reads as started 10 s early, and a restart
    // quarantine until that start + the ceiling (6 s) is over already. B's readings of the old
    // process, through the same socket, show the jump.
    expectRefused(await attemptAnswered(b), lockA, /clock|restart|quarantine/);
    expect(nodeOf(b, 2).readySince).toBe(socket);
    const epoch = (await readEpoch(n3.client, prefix))!;
    expect(epoch.cause).toBe('clock-jump');
    expect(epoch.quarantineUntil).toBeGreaterThan((await nodeMs(n3)) + MAX_TTL - 1_500);
  }, 60_000);

  it('a step back during a data-loss quarantine on a clock an hour behind: the clock-jump quarantine keeps the longer end and the reseed owed', async () => {
    // The clock-jump cause writes a new sentinel (createdAt) and sets no reseed of its own: it must
    // neither shorten the data-loss quarantine (probe.lua keeps the latest end) nor drop the reseed
    // that quarantine owes, or node 3 would vote with a register floored from its clock, an hour
    // below the fences issued (reseed.ts).
    const { a, b, prefix } = await scene('reseed-step-back', {}, { offsetMs: -3_600_000 });
    const n3 = nodes[2]!;
    const lockA = await holdOnMajority(a, 'res', nodes, 1_000);
    await lockA.release();
    for (const i of [3, 4]) await nodes[i]!.client.hset(`${prefix}epoch`, 'fence', String(lockA.fence! - 10));
    await n3.client.flushall();
    await b.acquire('other', 1_000, { fenced: false }).then(
      (l) => l.release(),
      () => null,
    );
    await waitFor(async () => (await readEpoch(n3.client, prefix))?.cause === 'data-loss', 5_000, "node 3's data-loss quarantine");
    const loss = (await readEpoch(n3.client, prefix))!;
    // Ten seconds further back: B's next probe sees the step.
    clock.set(-3_610_000);
    await waitFor(
      async () => {
        await b.acquire('other', 1_000, { fenced: false }).then(
          (l) => l.release(),
          () => null,
        );
        return (await readEpoch(n3.client, prefix))?.cause === 'clock-jump';
      },
      5_000,
      "node 3's clock-jump quarantine",
    );
    const jump = (await readEpoch(n3.client, prefix))!;
    expect(jump.quarantineUntil).toBe(loss.quarantineUntil);
    expect(await n3.client.hget(`${prefix}epoch`, 'reseed')).toBe('1');
    expect(jump.fence).toBeLessThan(lockA.fence!);
    await waitFor(async () => (await nodeMs(n3)) > jump.quarantineUntil + 50, 30_000, "the end of node 3's quarantine");
    // Nodes 1 and 2 refuse: a grant must count node 3, and its fence must be above A's. A fresh client:
    // B's own guess of the next fence (fence-ahead.ts) already knows nodes 1 and 2's registers.
    const c = bed.client(prefix);
    for (const i of [0, 1]) await nodes[i]!.client.set(c.lockKey('after'), 'foreign', 'PX', 30_000);
    const granted: Lock[] = [];
    await waitFor(
      async () => {
        const outcome = await c.acquire('after', 1_000).catch(() => null);
        if (outcome) granted.push(outcome);
        return granted.length > 0;
      },
      5_000,
      'B to be granted with node 3',
    );
    expect(granted[0]!.votes[2]).toMatchObject({ vote: 'for' });
    expect(granted[0]!.fence!).toBeGreaterThan(lockA.fence!);
  }, 60_000);
});
