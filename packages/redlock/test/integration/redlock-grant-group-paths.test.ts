import { describe, expect, it } from 'vitest';
import { Lock, readEpoch, Redlock, RedlockError, type RedlockSettings } from '@redlock-console/redlock';
import { FenceCall } from '../../src/fence-group';
import { uniquePrefix, waitFor } from '@/test/support/cluster';
import { markCleanLevel } from '@/test/support/majority';
import { NO_PERSISTENCE, type RedisNode } from '@/test/support/redis-nodes';
import { shiftedClock, type ShiftedClock } from '@/test/support/clock-shim';
import { nodeOf } from '../support/lock-node';
import { testBed } from '../support/test-bed';

// What one node's batch of grants does with its shared reads (packages/redlock/src/grant-group.ts),
// on the paths mutation testing left open (docs/mutation.md, eighth session): which members a
// probe serves, the batch's own check and the WATCH after it, a failed TIME, the raise sent beside
// a check, and a clock jump's mark cleared once its quarantine is written. On real redis-server 7
// processes; node 1's wall clock moves under an LD_PRELOAD shim (clock-shim.ts).

const MAX_TTL = 6_000;
let nodes: RedisNode[] = [];
let clock: ShiftedClock;
const bed = testBed({ maxTtlMs: MAX_TTL, retryCount: 0, nodeTimeoutMs: 2_000, nodeCheckIntervalMs: 60_000 }, { quietNodeErrors: true });
const client = bed.client;

const ALL = [0, 1, 2, 3, 4];

/** Wait until `r` (nodeCheckIntervalMs 10) is due a check on every node: its next batches carry one. */
async function checksDue(r: Redlock): Promise<void> {
  await waitFor(() => ALL.every((i) => nodeOf(r, i).checkDue(10)), 2_000, 'a check due on every node');
}

/** Five nodes (node 1's clock movable), marked clean by A; B (with `settings`) is warm: it checked every node. */
async function setUp(name: string, settings: Partial<RedlockSettings> = {}) {
  clock = shiftedClock();
  nodes = await bed.start(
    () => NO_PERSISTENCE,
    5,
    (i) => (i === 0 ? clock.env : {}),
  );
  const prefix = uniquePrefix(name);
  const a = client(prefix);
  const b = client(prefix, settings);
  await markCleanLevel(a, prefix, nodes);
  await (
    await (await b.acquire(['warm-1', 'warm-2'], 2_000)).release()
  ).settled;
  return { prefix, a, b };
}

/** Nodes 2 and 3 hold `resources` for someone else: a round needs node 1's own vote. */
async function needNodeOne(r: Redlock, resources: readonly string[]): Promise<void> {
  for (const i of [1, 2]) for (const res of resources) await nodes[i]!.client.set(r.lockKey(res), 'foreign', 'PX', 30_000);
}

async function attempt(r: Redlock, resource: string, fenced = true): Promise<Lock | Error> {
  return r.acquire(resource, 2_000, { fenced }).catch((e: Error) => e);
}

function votesOf(outcome: Lock | Error): readonly { vote: string; reason?: string; detail?: string }[] {
  return outcome instanceof Lock ? outcome.votes : (outcome as RedlockError).votes;
}

/** Call `seen` with each command `r`'s grant batches write to each node (LockNode.sendReserved: the grants, their TIME, probe and raise). */
function onWrite(r: Redlock, seen: (index: number, payload: Buffer) => void): void {
  for (const i of ALL) {
    const node = nodeOf(r, i);
    const sendReserved = node.sendReserved.bind(node);
    node.sendReserved = (payload, reply) => {
      seen(i, payload);
      sendReserved(payload, reply);
    };
  }
}

/** Counts the fence round's confirmations `r` sends (a FenceCall merged into a node's batch; the raise with the grant is not one). */
function fenceRoundsOf(r: Redlock): { calls: number } {
  const count = { calls: 0 };
  for (const i of ALL) {
    const node = nodeOf(r, i);
    const callMerged = node.callMerged.bind(node);
    node.callMerged = (kind, merge, member, reply) => {
      if (member instanceof FenceCall) count.calls++;
      callMerged(kind, merge, member, reply);
    };
  }
  return count;
}

/** Replace the reply of node `index`'s next command sent in a batch whose reply `pick` matches (once). */
function failReply(r: Redlock, index: number, pick: (value: unknown) => boolean, error: Error): { failed: number } {
  const node = nodeOf(r, index);
  const sendReserved = node.sendReserved.bind(node);
  const seen = { failed: 0 };
  node.sendReserved = (payload, reply) =>
    sendReserved(payload, (err, value) => {
      if (!err && seen.failed === 0 && pick(value)) {
        seen.failed++;
        reply(error, undefined);
      } else reply(err, value);
    });
  return seen;
}

describe('the members a batch probe serves (grant-group.ts add, decide)', () => {
  it('with the quarantine off, an unfenced grant reads no probe: its batch is its SET alone', async () => {
    // B is connected (warm): a first grant while connecting goes as a batch of its own (grant.ts sendAlone).
    const { b } = await setUp('paths-no-probe', { quarantine: false });
    const written = ALL.map(() => 0);
    onWrite(b, (i) => written[i]!++);
    const outcome = await attempt(b, 'np', false);
    expect(outcome, String(outcome)).toBeInstanceOf(Lock);
    await (
      await (outcome as Lock).release()
    ).settled;
    expect(written).toEqual([1, 1, 1, 1, 1]);
  });

  it("with the quarantine off, a failed probe costs the batch's fenced grant its vote, not the unfenced one beside it", async () => {
    const { b } = await setUp('paths-probe-failed', { quarantine: false });
    await needNodeOne(b, ['f', 'u']);
    // Node 1 refuses HMGET: the probe's read fails (NOPERM), the grants themselves do not.
    await nodes[0]!.client.call('ACL', 'SETUSER', 'default', '-hmget');
    const [fenced, unfenced] = await Promise.all([attempt(b, 'f', true), attempt(b, 'u', false)]);
    expect(votesOf(fenced)[0], JSON.stringify(votesOf(fenced))).toMatchObject({ vote: 'against', reason: 'error' });
    expect(votesOf(fenced)[0]!.detail, JSON.stringify(votesOf(fenced))).toMatch(/NOPERM/);
    expect(votesOf(unfenced)[0], JSON.stringify(votesOf(unfenced))).toMatchObject({ vote: 'for' });
    expect(unfenced).toBeInstanceOf(Lock);
  });

  it('with the quarantine off, a fenced grant reads its register in the fast transaction, not in a check, even when a check is due', async () => {
    const { b } = await setUp('paths-no-judging', { quarantine: false, nodeCheckIntervalMs: 10 });
    const multis = ALL.map(() => 0);
    onWrite(b, (i, payload) => {
      if (payload.toString('latin1').includes('\r\nMULTI\r\n')) multis[i]!++;
    });
    // No member of the batch judges the sentinel: the check that is due waits for one that does.
    await checksDue(b);
    const lock = await b.acquire('nj', 2_000);
    expect(typeof lock.fence).toBe('number');
    await (
      await lock.release()
    ).settled;
    expect(multis).toEqual([1, 1, 1, 1, 1]);
  });
});

describe('a batch whose probe is a check (grant-group.ts seal)', () => {
  it("the WATCH after the batch's own check is trusted once the check found the anchor: the next probe is the fast one", async () => {
    const { b } = await setUp('paths-check-anchor', { nodeCheckIntervalMs: 10 });
    // A check is due on every node: this batch's probe is a check, then UNWATCH, WATCH <anchor>.
    await checksDue(b);
    const lock = await b.acquire('w', 2_000);
    // The release goes out after the WATCH on each connection: settled, every WATCH has answered.
    await (
      await lock.release()
    ).settled;
    expect(ALL.map((i) => nodeOf(b, i).watch)).toEqual(['armed', 'armed', 'armed', 'armed', 'armed']);
  });

  it('a check that fails with an error other than NOSCRIPT is the vote (an error), not sent again', async () => {
    const { b } = await setUp('paths-check-error', { nodeCheckIntervalMs: 10 });
    await needNodeOne(b, ['c']);
    // The batch's check (13 entries: scripts/probe.lua check mode) is answered BUSY on node 1.
    const seen = failReply(b, 0, (v) => Array.isArray(v) && v.length === 13, new Error('BUSY Redis is busy running a script'));
    await checksDue(b);
    const outcome = await attempt(b, 'c', false);
    expect(seen.failed).toBe(1);
    expect(votesOf(outcome)[0], JSON.stringify(votesOf(outcome))).toMatchObject({ vote: 'against', reason: 'error' });
    expect(votesOf(outcome)[0]!.detail, JSON.stringify(votesOf(outcome))).toMatch(/BUSY/);
  });

  it("a warm client's batch of fenced grants: every member's proposal is confirmed by the one raise, none needs the fence round", async () => {
    const { b } = await setUp('paths-batch-ahead');
    const fenceCalls = fenceRoundsOf(b);
    const multis = ALL.map(() => 0);
    onWrite(b, (i, payload) => {
      if (payload.toString('latin1').includes('\r\nMULTI\r\n')) multis[i]!++;
    });
    const locks = await Promise.all(['b1', 'b2', 'b3'].map((r) => b.acquire(r, 2_000)));
    expect(locks.map((lock) => typeof lock.fence)).toEqual(['number', 'number', 'number']);
    expect(fenceCalls.calls).toBe(0);
    // One fast probe per node: the three grants went in one batch, and one raise confirmed them.
    expect(multis).toEqual([1, 1, 1, 1, 1]);
    await Promise.all(locks.map((lock) => lock.release()));
  });

  it("a warm client's fence proposal stands when the batch's probe is a check: the raise beside the check confirms it", async () => {
    const { b } = await setUp('paths-check-ahead', { nodeCheckIntervalMs: 10 });
    const fenceCalls = fenceRoundsOf(b);
    // A check is due on every node: this acquire's probes are checks (seal's first branch).
    await checksDue(b);
    const lock = await b.acquire('p', 2_000);
    expect(typeof lock.fence).toBe('number');
    expect(fenceCalls.calls).toBe(0);
    await lock.release();
  });
});

describe('a read failing inside the fast transaction (grant-group.ts takeTransaction)', () => {
  it("an epoch key of another type: the node votes error with the transaction's own WRONGTYPE, at once and without a check", async () => {
    const { b, prefix } = await setUp('paths-read-wrongtype');
    await needNodeOne(b, ['r']);
    // HMGET <prefix>epoch fails inside EXEC; the WATCHed anchor is untouched, so EXEC runs.
    await nodes[0]!.client.set(`${prefix}epoch`, 'not a hash');
    const outcome = await attempt(b, 'r', false);
    expect(votesOf(outcome)[0], JSON.stringify(votesOf(outcome))).toMatchObject({ vote: 'against', reason: 'error' });
    // The read's reply, not a check's (a script's error names the script).
    expect(votesOf(outcome)[0]!.detail, JSON.stringify(votesOf(outcome))).toMatch(/WRONGTYPE/);
    expect(votesOf(outcome)[0]!.detail, JSON.stringify(votesOf(outcome))).not.toMatch(/script/);
  });

  it('a node that refuses MULTI while quarantined: the check sent instead decides, and the node votes quarantined, never judged without a probe', async () => {
    const { b, prefix } = await setUp('paths-multi-refused');
    await needNodeOne(b, ['m']);
    // Node 1 is quarantined for another minute (its sentinel says so), then refuses MULTI (as a
    // proxy that cannot run transactions): B's fast transaction fails at its first command.
    const [sec] = await nodes[0]!.client.time();
    await nodes[0]!.client.hset(`${prefix}epoch`, 'quarantineUntil', String(Number(sec) * 1000 + 60_000));
    await nodes[0]!.client.call('ACL', 'SETUSER', 'default', '-multi');
    const outcome = await attempt(b, 'm', false);
    expect(votesOf(outcome)[0], JSON.stringify(votesOf(outcome))).toMatchObject({ vote: 'against', reason: 'quarantined' });
    expect(nodeOf(b, 0).probeByProof).toBe(false);
  });
});

describe('a batch whose TIME read fails (grant-group.ts decide)', () => {
  it('fails the members written after the TIME, not the one written before it', async () => {
    const { b } = await setUp('paths-time-failed');
    await needNodeOne(b, ['t1', 't2']);
    const node = nodeOf(b, 0);
    expect(node.quarantine.wantTime).toBe(false);
    // After t1's SET is written, B wants TIME (as another grant's evidence would): TIME goes out
    // before t2's SET, and its reply comes back as an error.
    const sendReserved = node.sendReserved.bind(node);
    let sent = 0;
    let second = '';
    node.sendReserved = (payload, reply) => {
      const k = sent++;
      if (k === 1) second = payload.toString('latin1');
      sendReserved(payload, k === 1 ? (_err, _value) => reply(new Error('ERR the TIME read failed'), undefined) : reply);
      if (k === 0) node.quarantine.wantTime = true;
    };
    const [t1, t2] = await Promise.all([attempt(b, 't1', false), attempt(b, 't2', false)]);
    // The failed reply is TIME's (a plain TIME on these nodes), not t2's own SET's.
    expect(second).toBe('*1\r\n$4\r\nTIME\r\n');
    expect(votesOf(t1)[0], JSON.stringify(votesOf(t1))).toMatchObject({ vote: 'for' });
    expect(votesOf(t2)[0], JSON.stringify(votesOf(t2))).toMatchObject({ vote: 'against', reason: 'error' });
    expect(votesOf(t2)[0]!.detail, JSON.stringify(votesOf(t2))).toMatch(/TIME read failed/);
  });
});

describe('a clock jump (grant-group.ts force)', () => {
  it('once its quarantine is written, the next probe does not count the node out again: the quarantine is not pushed on', async () => {
    const { b, prefix } = await setUp('paths-jump-recorded');
    await needNodeOne(b, ['j1', 'j2']);
    const evals = async () => Number(/cmdstat_eval:calls=(\d+)/.exec(await nodes[0]!.client.info('commandstats'))?.[1] ?? 0);
    const evalsBefore = await evals();
    clock.set(10_000);
    const first = await attempt(b, 'j1');
    // The check that starts it is this client's cached script (EVALSHA): no source sent again.
    expect(await evals()).toBe(evalsBefore);
    expect(votesOf(first)[0], JSON.stringify(votesOf(first))).toMatchObject({ vote: 'against', reason: 'quarantined' });
    const epoch = await readEpoch(nodes[0]!.client, prefix);
    expect(epoch?.cause).toBe('clock-jump');
    // At least a millisecond on node 1's clock, so that a second clock-jump check would write a later end.
    const nodeMs = async () => {
      const [s, us] = await nodes[0]!.client.time();
      return Number(s) * 1000 + Math.floor(Number(us) / 1000);
    };
    const at = await nodeMs();
    await waitFor(async () => (await nodeMs()) > at + 1, 2_000, "node 1's clock to move on");
    const second = await attempt(b, 'j2');
    expect(votesOf(second)[0], JSON.stringify(votesOf(second))).toMatchObject({ vote: 'against', reason: 'quarantined' });
    expect((await readEpoch(nodes[0]!.client, prefix))?.quarantineUntil).toBe(epoch?.quarantineUntil);
  });
});
