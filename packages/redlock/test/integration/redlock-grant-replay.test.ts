import { describe, expect, it } from 'vitest';
import { Lock, LockContendedError, readEpoch, Redlock, RedlockError, type RedlockSettings } from '@redlock-console/redlock';
import { anchorKey } from '../../src/keys';
import { encodeCommand } from '../../src/resp';
import { uniquePrefix } from '@/test/support/cluster';
import { holdOnMajority, markCleanLevel } from '@/test/support/majority';
import { NO_PERSISTENCE, type RedisNode } from '@/test/support/redis-nodes';
import { shiftedClock, type ShiftedClock } from '@/test/support/clock-shim';
import { nodeOf } from '../support/lock-node';
import { testBed } from '../support/test-bed';

// The paths of a grant that mutation testing found no test reaching (docs/mutation.md, group
// `grant`): a multi-resource grant sent again with the script's source after the node lost its
// script cache (grant.ts sendAlone), the clock check of that replay's own check, and the clock
// check of the check a suspicious fast read asks for (grant-group.ts judgeProbe). On real
// redis-server 7 processes; node 3's wall clock moves under an LD_PRELOAD shim (clock-shim.ts).
// Each case says the mutants it was seen to fail with.

const MAX_TTL = 6_000;
let nodes: RedisNode[] = [];
let clock: ShiftedClock;
const bed = testBed({ maxTtlMs: MAX_TTL, retryCount: 0, nodeTimeoutMs: 2_000, nodeCheckIntervalMs: 60_000 }, { quietNodeErrors: true });
const client = bed.client;

/** Five redis-servers; node `clockOn + 1`'s wall clock moves with `clock`. */
async function startNodes(clockOn: number): Promise<void> {
  clock = shiftedClock();
  nodes = await bed.start(
    () => NO_PERSISTENCE,
    5,
    (i) => (i === clockOn ? clock.env : {}),
  );
}

/** Nodes started (node `clockOn + 1`'s clock movable); A holds `res` on nodes 1–3 (when asked); B is warm: it checked every node, its next probes are fast ones. */
async function setUp(name: string, settings: Partial<RedlockSettings> = {}, clockOn = 2) {
  await startNodes(clockOn);
  const prefix = uniquePrefix(name);
  const a = client(prefix);
  const b = client(prefix, settings);
  await markCleanLevel(a, prefix, nodes);
  const warm = await b.acquire(['warm-1', 'warm-2'], 2_000);
  await (
    await warm.release()
  ).settled;
  return { prefix, a, b };
}

async function attempt(r: Redlock, resources: string | string[], ttl = 2_000, fenced = true): Promise<Lock | Error> {
  return r.acquire(resources, ttl, { fenced }).catch((e: Error) => e);
}

function votesOf(outcome: Lock | Error): readonly { vote: string; reason?: string; detail?: string }[] {
  return outcome instanceof Lock ? outcome.votes : (outcome as RedlockError).votes;
}

/** Run `before` once, right before the next grant B sends node `index` as a batch of its own (grant.ts sendAlone). */
function beforeReplay(b: Redlock, index: number, before: () => void): () => number {
  const node = nodeOf(b, index);
  const callBatch = node.callBatch.bind(node);
  let replays = 0;
  node.callBatch = (commands, reply) => {
    if (replays++ === 0) before();
    callBatch(commands, reply);
  };
  return () => replays;
}

describe('a multi-resource grant on a node that lost its script cache (SCRIPT FLUSH)', () => {
  it('is sent again with the script source, and that vote counts', async () => {
    const { b } = await setUp('replay-counts');
    // Nodes 4 and 5 refuse (a foreign key): B needs node 1's vote, which only the replay can give.
    // Node 1: the replay records the node by its index, and index 0 is the edge.
    for (const i of [3, 4]) await nodes[i]!.client.set(b.lockKey('m1'), 'foreign', 'PX', 30_000);
    await nodes[0]!.client.script('FLUSH');
    const replays = beforeReplay(b, 0, () => undefined);
    const outcome = await attempt(b, ['m1', 'm2']);
    expect(votesOf(outcome)[0], JSON.stringify(votesOf(outcome))).toMatchObject({ vote: 'for' });
    expect(outcome).toBeInstanceOf(Lock);
    expect(replays()).toBe(1);
    // The replay's grant reached node 1: B's key is there.
    expect(await nodes[0]!.client.get(b.lockKey('m1'))).toContain((outcome as Lock).token);
    await (outcome as Lock).release();
  });

  it('on a first contact (a client still connecting): sent again with the source, and the vote counts', async () => {
    const { a, prefix } = await setUp('first-contact-noscript');
    for (const i of [3, 4]) await nodes[i]!.client.set(a.lockKey('m1'), 'foreign', 'PX', 30_000);
    const fresh = client(prefix);
    // The connection loads the scripts when it is ready; a SCRIPT FLUSH written right after that
    // load, before the first grant (a batch of its own while connecting), makes its EVALSHA meet NOSCRIPT.
    const node = nodeOf(fresh, 0);
    expect(node.connecting).toBe(true);
    const callBatch = node.callBatch.bind(node);
    const batches: string[] = [];
    node.callBatch = (commands, reply) => {
      if (batches.length === 0) callBatch([encodeCommand(['SCRIPT', 'FLUSH'])], () => undefined);
      batches.push(commands.map((c) => c.toString('latin1').split('\r\n')[2]).join(' '));
      callBatch(commands, reply);
    };
    const outcome = await attempt(fresh, ['m1', 'm2']);
    expect(votesOf(outcome)[0], JSON.stringify(votesOf(outcome))).toMatchObject({ vote: 'for' });
    expect(outcome).toBeInstanceOf(Lock);
    // The first try's EVALSHA, then the replay's EVAL (each after the node's TIME: it may be quarantined).
    expect(batches.map((b) => b.replace(/^\S+ /, ''))).toEqual(['EVALSHA', 'EVAL']);
    await (outcome as Lock).release();
  });

  it('a failed attempt names the node in cleanupPending: the replay may run after the cleanup', async () => {
    const { b } = await setUp('replay-cleanup');
    // Nodes 1, 2 and 4 refuse: the attempt fails (at once: no quorum is left). Node 3's grant is
    // replayed; every node answers the cleanup on the grant's connection, so only the replay names node 3.
    for (const i of [0, 1, 3]) await nodes[i]!.client.set(b.lockKey('m1'), 'foreign', 'PX', 30_000);
    await nodes[2]!.client.script('FLUSH');
    const outcome = await attempt(b, ['m1', 'm2']);
    expect(outcome).toBeInstanceOf(LockContendedError);
    expect((outcome as RedlockError).cleanupPending, JSON.stringify(votesOf(outcome))).toEqual([3]);
  });

  it("whose clock jumps before the replay: the replay's own check counts the node out (Kleppmann's counterexample)", async () => {
    const { a, b } = await setUp('replay-clock');
    const lockA = await holdOnMajority(a, 'res', nodes, 5_000);
    await nodes[2]!.client.script('FLUSH');
    // B's first try meets NOSCRIPT; its group's check (a new baseline for node 3's clock) runs
    // before the replay. The clock jumps 10 s forward between the two: A's key on node 3 expires
    // at once by that clock, the replayed acquire.lua grants B there, and nodes 4 and 5 grant too.
    const replays = beforeReplay(b, 2, () => clock.set(10_000));
    const outcome = await attempt(b, ['res', 'other']);
    expect(replays()).toBe(1);
    if (outcome instanceof Lock) {
      throw new Error(`two holders: B was granted (votes ${JSON.stringify(outcome.votes)}) while A holds (${lockA.validityMs} ms left)`);
    }
    expect(outcome).toBeInstanceOf(LockContendedError);
    const votes = votesOf(outcome);
    expect(votes[2], JSON.stringify(votes)).toMatchObject({ vote: 'against', reason: 'error' });
    expect(votes[2]!.detail, JSON.stringify(votes)).toMatch(/clock jumped/);
    expect(lockA.validityMs).toBeGreaterThan(0);
  });

  it('whose clock jumps before the replay: the node is quarantined too, so the next try does not count it while A holds', async () => {
    // The replay's check counts the node out and forgets its readings (clock-check.ts); without a
    // quarantine started there and then, the next try's check takes the jumped clock as its new
    // baseline, node 3 (A's key expired by its clock) votes for B, and B is granted beside A.
    const { a, b, prefix } = await setUp('replay-clock-next');
    const lockA = await holdOnMajority(a, 'res', nodes, 5_000);
    await nodes[2]!.client.script('FLUSH');
    beforeReplay(b, 2, () => clock.set(10_000));
    const first = await attempt(b, ['res', 'other']);
    expect(votesOf(first)[2]!.detail, JSON.stringify(votesOf(first))).toMatch(/clock jumped/);
    expect((await readEpoch(nodes[2]!.client, prefix))?.cause).toBe('clock-jump');
    const next = await attempt(b, 'res');
    if (next instanceof Lock) {
      throw new Error(
        `two holders on the next try: B was granted (votes ${JSON.stringify(next.votes)}) while A holds (${lockA.validityMs} ms left)`,
      );
    }
    expect(votesOf(next)[2], JSON.stringify(votesOf(next))).toMatchObject({ vote: 'against' });
  });
});

describe('a clock jump that only the check a suspicious fast read asks for sees', () => {
  it('counts the node out and starts its clock-jump quarantine', async () => {
    const { b, prefix } = await setUp('check-clock');
    // CONFIG RESETSTAT: the fast read's command count goes below the one the last check recorded
    // (grant-evidence.ts 'resetstat'), so a check follows before any vote. The clock jumps between
    // the fast read (whose TIME agrees) and that check.
    await nodes[2]!.client.config('RESETSTAT');
    // Nodes 4 and 5 refuse (a foreign key): the round waits for node 3's own vote.
    for (const i of [3, 4]) await nodes[i]!.client.set(b.lockKey('x'), 'foreign', 'PX', 30_000);
    const node = nodeOf(b, 2);
    const runCheck = node.runCheck.bind(node);
    let checks = 0;
    node.runCheck = (...args) => {
      if (checks++ === 0) clock.set(10_000);
      return runCheck(...args);
    };
    const outcome = await attempt(b, 'x');
    expect(checks).toBeGreaterThan(0);
    const votes = votesOf(outcome);
    expect(votes[2], JSON.stringify(votes)).toMatchObject({ vote: 'against', reason: 'quarantined' });
    expect(votes[2]!.detail ?? '', JSON.stringify(votes)).toMatch(/clock/);
    expect((await readEpoch(nodes[2]!.client, prefix))?.cause).toBe('clock-jump');
    if (outcome instanceof Lock) await outcome.release();
  });
});

describe('with nodeChecks off (the UNSAFE negative control: only a missing sentinel is detected)', () => {
  it('a touched anchor and a clock jump start no quarantine and cost node 3 no vote, on the fast path or a replay', async () => {
    const { b, prefix } = await setUp('unsafe-clock', { nodeChecks: false });
    // Nodes 4 and 5 refuse `x` (a foreign key): every grant below needs node 3's own vote.
    for (const i of [3, 4]) await nodes[i]!.client.set(b.lockKey('x'), 'foreign', 'PX', 60_000);
    const node3For = async (what: string, resources: string | string[]): Promise<void> => {
      const outcome = await attempt(b, resources);
      expect(votesOf(outcome)[2], `${what}: ${JSON.stringify(votesOf(outcome))}`).toMatchObject({ vote: 'for' });
      if (outcome instanceof Lock) await (await outcome.release()).settled;
    };
    // A fast probe and a replay before anything moves (readings a clock check would keep).
    await node3For('a fast probe', 'x');
    await nodes[2]!.client.script('FLUSH');
    await node3For('a replay', ['x', 'y']);
    // The anchor written: the WATCH aborts the next EXEC. No rollback quarantine at this level.
    await nodes[2]!.client.del(anchorKey(prefix));
    await node3For('after the anchor was touched', 'x');
    // The clock 10 s forward: no clock check at this level, on the fast path or a replay's check.
    clock.set(10_000);
    await node3For('a fast probe after the jump', 'x');
    await nodes[2]!.client.script('FLUSH');
    await node3For('a replay after the jump', ['x', 'y']);
    expect((await readEpoch(nodes[2]!.client, prefix))?.cause).toBeUndefined();
  });
});

describe("a first contact's grant (a batch of its own, grant.ts sendAlone)", () => {
  it('with the quarantine off (the UNSAFE setting) and no fence: no probe is read, and the votes count', async () => {
    const { prefix } = await setUp('first-contact-no-probe');
    const fresh = client(prefix, { quarantine: false });
    const outcome = await attempt(fresh, 'np', 2_000, false);
    expect(outcome, String(outcome)).toBeInstanceOf(Lock);
    expect(votesOf(outcome).filter((v) => v.vote === 'for').length).toBeGreaterThanOrEqual(3);
    await (outcome as Lock).release();
  });

  it('a grant the node refuses (WRONGTYPE): that node votes error with its words, not as held by a holder', async () => {
    const { a, prefix } = await setUp('first-contact-wrongtype');
    // Node 1's lock key is a hash: SET … NX GET fails there. Nodes 2 and 3 refuse (a foreign key),
    // so the round waits for node 1's vote.
    await nodes[0]!.client.hset(a.lockKey('wt'), 'f', 'v');
    for (const i of [1, 2]) await nodes[i]!.client.set(a.lockKey('wt'), 'foreign', 'PX', 30_000);
    const outcome = await attempt(client(prefix), 'wt');
    const votes = votesOf(outcome);
    expect(votes[0], JSON.stringify(votes)).toMatchObject({ vote: 'against', reason: 'error' });
    expect(votes[0]!.detail, JSON.stringify(votes)).toMatch(/WRONGTYPE/);
  });

  it('a check answered with a reply of another shape: the node votes error, never judged as if it had no probe', async () => {
    const { a, prefix } = await setUp('first-contact-shape');
    for (const i of [1, 2]) await nodes[i]!.client.set(a.lockKey('res'), 'foreign', 'PX', 30_000);
    const fresh = client(prefix);
    const node = nodeOf(fresh, 0);
    const runCheck = node.runCheck.bind(node);
    const other = Array.from({ length: 20 }, (_, i) => `field-${i}`);
    node.runCheck = (...args) => runCheck(...args).then((checked) => ({ ...checked, reply: other }));
    const outcome = await attempt(fresh, 'res');
    const votes = votesOf(outcome);
    expect(outcome).not.toBeInstanceOf(Lock);
    expect(votes[0], JSON.stringify(votes)).toMatchObject({ vote: 'against', reason: 'error' });
    expect(votes[0]!.detail, JSON.stringify(votes)).toMatch(/^unexpected reply to the probe/);
  });
});

describe('a check the batch needs that fails (grant-group.ts): the members it judges vote error with the node’s words', () => {
  /** B warm; nodes 2 and 3 refuse `res` (a foreign key), so node 1's own vote is in the outcome; node 1 then refuses EVAL. */
  async function refusingScripts(name: string, clockOn = 2) {
    const { b, prefix } = await setUp(name, {}, clockOn);
    for (const i of [1, 2]) await nodes[i]!.client.set(b.lockKey('res'), 'foreign', 'PX', 30_000);
    await nodes[0]!.client.call('ACL', 'SETUSER', 'default', '-eval', '-evalsha', '-eval_ro', '-evalsha_ro');
    return { b, prefix };
  }

  it('the check after a failed proof (SCRIPT FLUSH) is refused: an error vote, not a vote judged without a probe', async () => {
    const { b } = await refusingScripts('check-refused');
    await nodes[0]!.client.script('FLUSH');
    // Unfenced: the member needs the probe for the quarantine alone (grant-group.ts decide, needsProbe).
    const votes = votesOf(await attempt(b, 'res', 2_000, false));
    expect(votes[0], JSON.stringify(votes)).toMatchObject({ vote: 'against', reason: 'error' });
    expect(votes[0]!.detail, JSON.stringify(votes)).toMatch(/NOPERM/);
  });

  it('the check that starts a clock-jump quarantine is refused: an error vote', async () => {
    const { b } = await refusingScripts('forced-refused', 0);
    clock.set(10_000);
    const votes = votesOf(await attempt(b, 'res'));
    expect(votes[0], JSON.stringify(votes)).toMatchObject({ vote: 'against', reason: 'error' });
    expect(votes[0]!.detail, JSON.stringify(votes)).toMatch(/NOPERM/);
  });

  it('the check that starts a clock-jump quarantine answers a reply of another shape: an error vote saying so', async () => {
    const { b } = await setUp('forced-shape', {}, 0);
    for (const i of [1, 2]) await nodes[i]!.client.set(b.lockKey('res'), 'foreign', 'PX', 30_000);
    const node = nodeOf(b, 0);
    const runCheck = node.runCheck.bind(node);
    node.runCheck = (...args) => runCheck(...args).then((checked) => ({ ...checked, reply: ['another', 'shape'] }));
    clock.set(10_000);
    const votes = votesOf(await attempt(b, 'res'));
    expect(votes[0], JSON.stringify(votes)).toMatchObject({ vote: 'against', reason: 'error' });
    expect(votes[0]!.detail, JSON.stringify(votes)).toMatch(/^unexpected reply to the probe/);
  });
});

describe('one batch whose TIME is written after some of its grants (grant-group.ts decide)', () => {
  it('a grant written before the TIME is judged without it: a quarantine that TIME finds over still costs that grant the vote', async () => {
    const { b, prefix } = await setUp('time-order');
    // Node 1's sentinel records a quarantine long over (until just after its createdAt) that B has
    // never seen over; nodes 4 and 5 refuse both resources, so node 1's votes are in both outcomes.
    const createdAt = Number(await nodes[0]!.client.hget(`${prefix}epoch`, 'createdAt'));
    await nodes[0]!.client.hset(`${prefix}epoch`, 'quarantineUntil', String(createdAt + 1));
    for (const i of [3, 4]) for (const r of ['t1', 't2']) await nodes[i]!.client.set(b.lockKey(r), 'foreign', 'PX', 30_000);
    // B asks for no TIME when t1's SET is written; right after it (the same batch), as when another
    // grant's evidence started a quarantine in between, it does: TIME goes out before t2's SET.
    const node = nodeOf(b, 0);
    expect(node.quarantine.wantTime).toBe(false);
    const sendReserved = node.sendReserved.bind(node);
    let sent = 0;
    node.sendReserved = (payload, reply) => {
      sendReserved(payload, reply);
      if (sent++ === 0) node.quarantine.wantTime = true;
    };
    const [t1, t2] = await Promise.all([attempt(b, 't1', 2_000, false), attempt(b, 't2', 2_000, false)]);
    // t1's SET ran before the TIME: nothing says the quarantine was over when it ran.
    expect(votesOf(t1)[0], JSON.stringify(votesOf(t1))).toMatchObject({ vote: 'against', reason: 'quarantined' });
    expect(votesOf(t2)[0], JSON.stringify(votesOf(t2))).toMatchObject({ vote: 'for' });
    expect(t2).toBeInstanceOf(Lock);
    await (t2 as Lock).release();
  });
});
