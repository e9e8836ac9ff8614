import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { Lock, LockContendedError, readEpoch, Redlock, RedlockError, type RedlockSettings } from '@redlock-console/redlock';
import { uniquePrefix, waitFor } from '@/test/support/cluster';
import { holdOnMajority, markCleanLevel } from '@/test/support/majority';
import { DEFAULT_RDB, NO_PERSISTENCE, type RedisNode } from '@/test/support/redis-nodes';
import { shiftedClock, type ShiftedClock } from '@/test/support/clock-shim';
import { nodeOf } from '../support/lock-node';
import { attemptAnswered, keyGone, nodeClockPast, warmClocks } from '../support/clock-scene';
import { testBed } from '../support/test-bed';

// Steps of a node's clock the clock check (clock-check.ts) once let through, found by a hostile
// review, each on real redis-server processes: A holds `res` on exactly nodes 1–3 of 5, node 3's
// wall clock is moved (test/support/clock-shim.ts) so that A's key there expires early, and B (a
// client with readings of node 3) must be refused while A holds, node 3 voting `quarantined`. Each
// gave B the lock before the fix its comment names. Mutual exclusion is what is attacked; fence
// order is not (a clock-jump quarantine only takes votes away and raises the register, probe.lua).

const MAX_TTL = 6_000;
let nodes: RedisNode[] = [];
let clock: ShiftedClock;
const bed = testBed({ maxTtlMs: MAX_TTL, retryCount: 0, nodeTimeoutMs: 2_000, nodeCheckIntervalMs: 60_000 }, { quietNodeErrors: true });
const client = bed.client;

/** Five nodes (node 3's clock movable), A and B on one prefix with `ceiling`, B warm with `settingsB`. */
async function scene(name: string, settingsB: Partial<RedlockSettings> = {}, ceiling = MAX_TTL, persistence = NO_PERSISTENCE) {
  clock = shiftedClock();
  nodes = await bed.start(
    () => persistence,
    5,
    (i) => (i === 2 ? clock.env : {}),
  );
  const prefix = uniquePrefix(name);
  const a = client(prefix, { maxTtlMs: ceiling });
  const b = client(prefix, { maxTtlMs: ceiling, ...settingsB });
  await markCleanLevel(a, prefix, nodes);
  await warmClocks(b, nodes);
  return { prefix, a, b };
}

/** B was refused while A holds, node 3 voting against. */
function expectRefused(outcome: Lock | Error, lockA: Lock, context = ''): void {
  if (outcome instanceof Lock) {
    throw new Error(
      `two holders: B was granted (fence ${outcome.fence}, votes ${JSON.stringify(outcome.votes)}) while A holds (fence ${lockA.fence}, ${lockA.validityMs} ms of validity left)${context}`,
    );
  }
  expect(outcome).toBeInstanceOf(LockContendedError);
  expect((outcome as RedlockError).votes[2], JSON.stringify((outcome as RedlockError).votes)).toMatchObject({
    vote: 'against',
    reason: 'quarantined',
  });
  expect(lockA.validityMs).toBeGreaterThan(0);
}

/** Until `ms` of B's monotonic clock have passed since its last reading of node 3. */
async function idle(b: Redlock, ms: number): Promise<void> {
  const since = nodeOf(b, 2).clock.last!.at;
  await waitFor(() => performance.now() - since > ms, ms + 10_000, `B idle for ${ms} ms`);
}

/** A TCP proxy to `port` whose client-to-server bytes can be held and let go: a probe delayed on its way. */
function holdingProxy(port: number) {
  let held = false;
  const queues: Array<{ buf: Buffer[]; up: net.Socket }> = [];
  const server = net.createServer((c) => {
    const up = net.connect(port, '127.0.0.1');
    const q = { buf: [] as Buffer[], up };
    queues.push(q);
    c.on('data', (d) => (held ? q.buf.push(d) : up.write(d)));
    up.on('data', (d) => c.write(d));
    for (const [from, to] of [
      [c, up],
      [up, c],
    ] as const) {
      from.on('error', () => to.destroy());
      from.on('close', () => to.destroy());
    }
  });
  return {
    listen: () => new Promise<number>((r) => server.listen(0, '127.0.0.1', () => r((server.address() as net.AddressInfo).port))),
    hold: () => (held = true),
    release: () => {
      held = false;
      for (const q of queues) for (const b of q.buf.splice(0)) q.up.write(b);
    },
    close: () => server.close(),
  };
}

describe('steps of a node clock the clock check sees', () => {
  it('a second jump forward before B’s first probe after the first jump’s quarantine was written: the quarantine ends early', async () => {
    const ceiling = MAX_TTL;
    const { a, b, prefix } = await scene('hole-second-jump', {}, ceiling);
    const lockA = await holdOnMajority(a, 'res', nodes, ceiling - 500);
    const n3 = nodes[2]!;
    clock.set(20_000);
    await keyGone(a, n3);
    expectRefused(await attemptAnswered(b), lockA);
    const until = (await readEpoch(n3.client, prefix))!.quarantineUntil;
    // The quarantine is written. Before the fix B had forgotten its readings here, and its next one
    // became its baseline: the step below went unseen (clock-check.ts keeps the jumped reading).
    expect(nodeOf(b, 2).clock.jumpPending).toBe(false);
    clock.set(25_000);
    await nodeClockPast(n3, until + 50, ceiling);
    expectRefused(await attemptAnswered(b), lockA, `; node 3's sentinel: ${JSON.stringify(await readEpoch(n3.client, prefix))}`);
  }, 60_000);

  it('a second jump during a clock-jump quarantine, after a slow probe gave B a wide baseline: the quarantine ends early', async () => {
    const ceiling = 15_000;
    const { a, b, prefix } = await scene('hole-wide-base', {}, ceiling);
    const lockA = await holdOnMajority(a, 'res', nodes, ceiling - 500);
    const n3 = nodes[2]!;
    clock.set(20_000);
    await keyGone(a, n3);
    expectRefused(await attemptAnswered(b), lockA);
    const until = (await readEpoch(n3.client, prefix))!.quarantineUntil;
    // Node 3 stops for 6 s while B's next probe is on the wire: its reading, B's new baseline, is 6 s wide.
    const pid = Number(/process_id:(\d+)/.exec(await n3.client.info('server'))![1]);
    process.kill(pid, 'SIGSTOP');
    const during = b.acquire('other', 2_000).catch((e: Error) => e);
    // pace: node 3 stays stopped this long, the round trip of the probe B takes for its baseline
    await new Promise((r) => setTimeout(r, 6_000));
    process.kill(pid, 'SIGCONT');
    await during;
    // A second step of 5 s, inside that width: the quarantine (on node 3's clock) ends 5 s early.
    clock.set(25_000);
    await nodeClockPast(n3, until + 50, ceiling);
    expectRefused(await attemptAnswered(b), lockA);
  }, 60_000);

  it('the same restart with the clock 10 s behind, seen by B, then the clock put right before B’s next probe: the correction is its new baseline', async () => {
    const { a, b, prefix } = await scene('hole-restart-behind-seen', {}, MAX_TTL, DEFAULT_RDB);
    const n3 = nodes[2]!;
    await n3.client.save();
    const lockA = await holdOnMajority(a, 'res', nodes, 5_500);
    await n3.crash();
    clock.set(-10_000);
    await n3.start();
    // B meets the new process while its clock is behind: the restart and the step back are both found.
    expectRefused(await attemptAnswered(b), lockA);
    expect((await readEpoch(n3.client, prefix))?.cause).toBe('clock-jump');
    // B keeps the reading that showed the step back: the correction below is a step against it.
    expect(nodeOf(b, 2).clock.last).not.toBeNull();
    // NTP steps the clock right: the quarantine, written on the clock 10 s behind, is over at once.
    clock.set(0);
    expectRefused(await attemptAnswered(b), lockA, `; node 3's sentinel: ${JSON.stringify(await readEpoch(n3.client, prefix))}`);
  });

  it('B (driftFactor 0.45) idle for 6 s, then node 3 forward by 2 s during a 1.5 s lease: the allowance stops at the ceiling (2 s)', async () => {
    // Uncapped, 0.45 × 6 s + 2 ms = 2.7 s allowed: the 2 s step that expires A's key went unseen.
    // Capped at the ceiling: 0.45 × 2 s + 2 ms = 902 ms.
    const { a, b } = await scene('clock-idle-cap', { driftFactor: 0.45 }, 2_000);
    await idle(b, 6_000);
    const lockA = await holdOnMajority(a, 'res', nodes, 1_500);
    clock.set(2_000);
    await keyGone(a, nodes[2]!);
    expectRefused(await attemptAnswered(b, 'res', 500), lockA);
  });

  it('a jump seen by a probe held 4 s on its way, then +3 s once the quarantine is written: the check that wrote it is the reference, not the wide reading', async () => {
    // Found in review: the wide reading that showed the jump became B's baseline and hid the second
    // step, and the quarantine, counted on node 3's clock, ended 3 s early (two holders).
    clock = shiftedClock();
    nodes = await bed.start(
      () => NO_PERSISTENCE,
      5,
      (i) => (i === 2 ? clock.env : {}),
    );
    const proxy = holdingProxy(Number(new URL(nodes[2]!.url).port));
    const port = await proxy.listen();
    bed.onCleanup(() => proxy.close());
    const prefix = uniquePrefix('clock-held-probe');
    const a = client(prefix);
    const b = client(
      prefix,
      {},
      nodes.map((n, i) => (i === 2 ? `redis://127.0.0.1:${port}` : n.url)),
    );
    await markCleanLevel(a, prefix, nodes);
    await warmClocks(b, nodes);
    // B's next probe of node 3 is written now and held on the way.
    proxy.hold();
    const during = b.acquire('other', 2_000).catch((e: Error) => e);
    // pace: the time B's probe spends on the way (the width of the reading that will show the jump)
    await new Promise((r) => setTimeout(r, 4_000));
    const lockA = await holdOnMajority(a, 'res', nodes, MAX_TTL - 500);
    const n3 = nodes[2]!;
    clock.set(20_000);
    await keyGone(a, n3);
    proxy.release();
    const d = await during;
    if (d instanceof Lock) await d.release();
    await waitFor(
      async () => !nodeOf(b, 2).clock.jumpPending && (await readEpoch(n3.client, prefix))?.cause === 'clock-jump',
      5_000,
      "node 3's clock-jump quarantine",
    );
    const until = (await readEpoch(n3.client, prefix))!.quarantineUntil;
    clock.set(23_000);
    await nodeClockPast(n3, until + 50, MAX_TTL);
    expectRefused(await b.acquire('res', 500).catch((e: Error) => e), lockA);
  }, 60_000);
});
