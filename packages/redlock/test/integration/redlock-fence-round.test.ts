import { describe, expect, it } from 'vitest';
import { epochKey, LockExpiredError, lockKey, QuorumUnavailableError, Redlock } from '@redlock-console/redlock';
import type { LockNode, Reply } from '../../src/node';
import { FenceCall } from '../../src/fence-group';
import { GrantGroup } from '../../src/grant-group';
import { uniquePrefix, waitFor } from '@/test/support/cluster';
import { redlockEnv } from '@/test/support/redlock-env';

// fence-round.ts, the second round of a fenced acquire: the fence is one above the highest register
// among the grant's voters, and it counts only when a quorum confirms it (fence.lua raises a
// register to it only where every lock key still holds the token). Found unkilled by mutation
// testing (docs/mutation.md): every earlier test kept the registers in step, and none made the
// confirmation round itself fail.

const env = redlockEnv();
const NODE_TIMEOUT = 1_000;

function client(prefix: string, nodeTimeoutMs = NODE_TIMEOUT): Redlock {
  // The fence round itself is under test: no fence proposed with the grant (fence-ahead.ts).
  const r = new Redlock(env.cluster.urls, { keyPrefix: prefix, retryCount: 0, nodeTimeoutMs, fenceAhead: false });
  env.redlocks.push(r);
  return r;
}

function nodesOf(r: Redlock): LockNode[] {
  return (r as unknown as { nodes: LockNode[] }).nodes;
}

/** Make nodes `indexes` do `onFence` with each fence confirmation instead of sending it. */
function interceptFences(r: Redlock, indexes: readonly number[], onFence: (send: () => void, index: number) => void): void {
  for (const i of indexes) {
    const node = nodesOf(r)[i]!;
    const callMerged = node.callMerged.bind(node);
    node.callMerged = (kind, merge, member, reply) => {
      if (!(member instanceof FenceCall)) return callMerged(kind, merge, member, reply);
      onFence(() => callMerged(kind, merge, member, reply), i);
    };
  }
}

/**
 * Count the fence confirmations sent to each node (by index); `onFence`, when given, sends each one
 * itself (`send`, optionally with a reply of its own wrapping the round's `reply`).
 */
function countFences(r: Redlock, onFence?: (send: (reply?: Reply) => void, index: number, reply: Reply) => void): number[] {
  const counts = nodesOf(r).map(() => 0);
  nodesOf(r).forEach((node, i) => {
    const callMerged = node.callMerged.bind(node);
    node.callMerged = (kind, merge, member, reply) => {
      if (!(member instanceof FenceCall)) return callMerged(kind, merge, member, reply);
      counts[i]!++;
      if (!onFence) return callMerged(kind, merge, member, reply);
      onFence((own = reply) => callMerged(kind, merge, member, own), i, reply);
    };
  });
  return counts;
}

/**
 * Hold the answers to node `index`'s grant (its SET and the probe beside it, grant-group.ts) in this
 * process until release(): the node stays `pending` at the grant's decision, and its vote arrives
 * when the test says, as from a node that answers late. complete(): every answer is in.
 */
function holdGrant(r: Redlock, index: number): { complete: () => boolean; release: () => void } {
  const node = nodesOf(r)[index]!;
  const held: Array<() => void> = [];
  let sent = 0;
  let holding = true;
  const sendReserved = node.sendReserved.bind(node);
  node.sendReserved = (payload, reply) => {
    sent++;
    sendReserved(payload, (err, value) => (holding ? held.push(() => reply(err, value)) : reply(err, value)));
  };
  return {
    complete: () => sent > 0 && held.length === sent,
    release: () => {
      holding = false;
      for (const answer of held.splice(0)) answer();
    },
  };
}

/**
 * Run `then` right after the answers to the grants of nodes `indexes` are all read, in the same
 * turn of the event loop as the last of them (which decides the grant round).
 */
function afterGrants(r: Redlock, indexes: readonly number[], then: () => void): void {
  const counts = indexes.map(() => ({ sent: 0, read: 0 }));
  let done = false;
  indexes.forEach((index, k) => {
    const node = nodesOf(r)[index]!;
    const sendReserved = node.sendReserved.bind(node);
    node.sendReserved = (payload, reply) => {
      counts[k]!.sent++;
      sendReserved(payload, (err, value) => {
        reply(err, value);
        counts[k]!.read++;
        if (done || !counts.every((c) => c.sent > 0 && c.read === c.sent)) return;
        done = true;
        then();
      });
    };
  });
}

/** Told once when a node's next grant vote has reached the grant round (nextVote). */
const voteWatchers = new Map<LockNode, () => void>();
const addGrant = GrantGroup.prototype.add;
GrantGroup.prototype.add = function (this: GrantGroup, plan, reply) {
  const node = (this as unknown as { node: LockNode }).node;
  const watcher = voteWatchers.get(node);
  if (!watcher) return addGrant.call(this, plan, reply);
  voteWatchers.delete(node);
  addGrant.call(this, plan, (err, value) => {
    reply(err, value);
    watcher();
  });
};

/** Resolves once node `index`'s next grant vote has reached the round (set before the acquire). */
function nextVote(r: Redlock, index: number): Promise<void> {
  return new Promise((resolve) => voteWatchers.set(nodesOf(r)[index]!, resolve));
}

/** A fenced client that has met every node (its grants take the batched path, grant-group.ts). */
async function warmClient(name: string, nodeTimeoutMs: number): Promise<{ r: Redlock; prefix: string }> {
  const prefix = uniquePrefix(name);
  const r = client(prefix, nodeTimeoutMs);
  await r.markNodesClean();
  await (await r.acquire('warm', 5_000)).release();
  return { r, prefix };
}

const takeOver = (prefix: string, i: number) => env.direct[i]!.set(lockKey(prefix, 'res'), 'someone-else', 'PX', 30_000);

describe('the fence round', () => {
  it("the fence is above the highest voter's register, wherever that voter is in the list", async () => {
    const prefix = uniquePrefix('fence-max');
    const r = client(prefix);
    await r.markNodesClean();
    await (await r.acquire('warm', 5_000)).release();
    // Node 2's register far above the others' (as after fences the others missed while it voted).
    const high = Number(await env.direct[1]!.hget(epochKey(prefix), 'fence')) + 1_000_000;
    await env.direct[1]!.hset(epochKey(prefix), 'fence', String(high));
    // Nodes 4 and 5 hold the resource for someone else, so nodes 1–3 must all vote for (node 2 late
    // on a loaded machine would otherwise stay pending, outside the grant's voters).
    for (const i of [3, 4]) await env.direct[i]!.set(lockKey(prefix, 'res'), 'someone-else', 'PX', 10_000);
    const lock = await r.acquire('res', 5_000);
    expect(lock.votes[1]!.vote).toBe('for');
    expect(lock.fence).toBeGreaterThan(high);
    await lock.release();
  });

  it('confirmations that never come from a majority: no lock (QuorumUnavailableError), not a lock with an unconfirmed fence', async () => {
    const r = client(uniquePrefix('fence-silent'));
    await r.markNodesClean();
    await (await r.acquire('warm', 5_000)).release();
    interceptFences(r, [0, 1, 2], () => undefined);
    const outcome = await r.acquire('res', 10_000).catch((e: unknown) => e);
    expect(outcome).toBeInstanceOf(QuorumUnavailableError);
  });

  // The error class here comes from protocol.ts's validity check after the round as much as from
  // the fence round's own `expired` flag: what this pins down is what the caller sees.
  it('the same with a lease shorter than the node timeout: the validity ran out waiting (LockExpiredError)', async () => {
    const r = client(uniquePrefix('fence-short'));
    await r.markNodesClean();
    await (await r.acquire('warm', 5_000)).release();
    interceptFences(r, [0, 1, 2], () => undefined);
    const outcome = await r.acquire('res', 400).catch((e: unknown) => e);
    expect(outcome).toBeInstanceOf(LockExpiredError);
  });

  it('keys taken over between the grant and the fence on a majority: the confirmations say lost, and no lock', async () => {
    const prefix = uniquePrefix('fence-lost');
    const r = client(prefix);
    await r.markNodesClean();
    await (await r.acquire('warm', 5_000)).release();
    interceptFences(r, [0, 1, 2], (send, i) => {
      void env.direct[i]!.set(lockKey(prefix, 'res'), 'someone-else', 'PX', 10_000).then(send);
    });
    const outcome = await r.acquire('res', 10_000).catch((e: unknown) => e);
    expect(outcome).toBeInstanceOf(QuorumUnavailableError);
    expect((outcome as QuorumUnavailableError).votes.slice(0, 3).map((v) => v.reason)).toEqual(['lost', 'lost', 'lost']);
  });

  it('keys taken over on a majority with a lease shorter than the node timeout: QuorumUnavailableError, the validity was not what ran out', async () => {
    const { r, prefix } = await warmClient('fence-lost-short', 5_000);
    countFences(r, (send, i) => void takeOver(prefix, i).then(() => send()));
    // 4 s of validity, far more than the round needs, but less than the 5 s node timeout.
    const outcome = await r.acquire('res', 4_000).catch((e: unknown) => e);
    expect(outcome).toBeInstanceOf(QuorumUnavailableError);
    expect(outcome).not.toBeInstanceOf(LockExpiredError);
  });

  it('nothing fails: a quorum of fence scripts, none to the nodes still pending at the grant’s decision', async () => {
    // Each early voter answers in about 400 ms (the grant, then its confirmation): the hedge waits
    // three times the grant round (about 1.2 s) before asking the pending nodes 4 and 5, and by then
    // the three confirmations are in.
    const { r } = await warmClient('fence-quorum', 4_000);
    const fences = countFences(r);
    const held = [3, 4].map((i) => holdGrant(r, i));
    try {
      for (const id of [1, 2, 3]) await env.cluster.supervisor.act(id, { action: 'latency', latencyMs: 400, jitterMs: 0 });
      const lock = await r.acquire('res', 10_000);
      expect(lock.fence).toBeGreaterThan(0);
      expect(fences).toEqual([1, 1, 1, 0, 0]);
      await lock.release();
    } finally {
      for (const id of [1, 2, 3]) await env.cluster.supervisor.act(id, { action: 'heal' });
      for (const h of held) h.release();
    }
  });

  it('early voters refuse: the hedge asks each node pending at the decision once, never an early voter again, and counts it whichever of its two answers comes first', async () => {
    const { r, prefix } = await warmClient('fence-hedge', 5_000);
    const held = [3, 4].map((i) => holdGrant(r, i));
    const vote4 = nextVote(r, 3);
    const fences = countFences(r, (send, i, reply) => {
      // Nodes 1 and 2: the key taken over before the confirmation runs (`lost`, which hedges).
      if (i <= 1) void takeOver(prefix, i).then(() => send());
      // Node 4: its grant's vote (for) arrives before its confirmation's answer.
      else if (i === 3) {
        held[0]!.release();
        void vote4.then(() => send());
      }
      // Node 5: its confirmation's answer arrives first, its grant's vote after it.
      else if (i === 4)
        send((err, value) => {
          reply(err, value);
          held[1]!.release();
        });
      else send();
    });
    try {
      // Only node 3 of the early voters confirms: the lock needs both pending nodes.
      const lock = await r.acquire('res', 10_000);
      expect(lock.fence).toBeGreaterThan(0);
      expect(fences).toEqual([1, 1, 1, 1, 1]);
      await lock.release();
    } finally {
      for (const h of held) h.release();
    }
  });

  it('a node pending at the decision whose late vote is against is not asked to confirm', async () => {
    const { r, prefix } = await warmClient('fence-late-against', 5_000);
    await takeOver(prefix, 4); // node 5 votes against (contended), late
    const held = [3, 4].map((i) => holdGrant(r, i));
    const [vote4, vote5] = [nextVote(r, 3), nextVote(r, 4)];
    const fences = countFences(r, (send, i) => {
      if (i === 0) {
        // Node 5's vote (against) arrives before node 1 refuses and the hedge runs.
        held[1]!.release();
        void vote5.then(() => takeOver(prefix, 0)).then(() => send());
      } else if (i === 3) {
        held[0]!.release();
        void vote4.then(() => send());
      } else send();
    });
    try {
      // Nodes 1–3 answer in about 200 ms: the hedge's own timer (three times the grant round) comes
      // long after node 5's vote.
      for (const id of [1, 2, 3]) await env.cluster.supervisor.act(id, { action: 'latency', latencyMs: 200, jitterMs: 0 });
      const lock = await r.acquire('res', 10_000);
      expect(lock.fence).toBeGreaterThan(0);
      expect(fences).toEqual([1, 1, 1, 1, 0]);
      await lock.release();
    } finally {
      for (const id of [1, 2, 3]) await env.cluster.supervisor.act(id, { action: 'heal' });
      for (const h of held) h.release();
    }
  });

  it('a round that can no longer reach a quorum fails at once, not at its deadline', async () => {
    const { r, prefix } = await warmClient('fence-no-quorum', 20_000);
    // Nodes 4 and 5 are held by someone else and answer (against) before nodes 1–3 vote for.
    for (const i of [3, 4]) await takeOver(prefix, i);
    const held = [0, 1, 2, 3, 4].map((i) => holdGrant(r, i));
    const votes = [nextVote(r, 3), nextVote(r, 4)];
    countFences(r, (send, i) => (i <= 1 ? void takeOver(prefix, i).then(() => send()) : send()));
    try {
      const started = performance.now();
      const outcome = r.acquire('res', 60_000).catch((e: unknown) => e);
      await waitFor(() => held.every((h) => h.complete()), 5_000, 'every grant answered');
      for (const i of [3, 4]) held[i]!.release();
      await Promise.all(votes);
      for (const i of [0, 1, 2]) held[i]!.release();
      // Node 3 confirms, nodes 1 and 2 say lost, nodes 4 and 5 are not asked: 1 of the 3 needed.
      expect(await outcome).toBeInstanceOf(QuorumUnavailableError);
      expect(performance.now() - started).toBeLessThan(10_000); // the node timeout is 20 s
    } finally {
      for (const h of held) h.release();
    }
  });

  it('a grant decided after its validity ran out (the process stalled) sends no fence script', async () => {
    const { r } = await warmClient('fence-stalled', 5_000);
    const fences = countFences(r);
    const held = [3, 4].map((i) => holdGrant(r, i));
    const started = performance.now();
    // The event loop stalls (as in a long GC pause) past the lease right after the last of the
    // three votes for is read: the grant is decided with its quorum, but no validity is left.
    afterGrants(r, [0, 1, 2], () => {
      while (performance.now() - started < 1_050);
    });
    try {
      expect(await r.acquire('res', 1_000).catch((e: unknown) => e)).toBeInstanceOf(LockExpiredError);
      expect(fences).toEqual([0, 0, 0, 0, 0]);
    } finally {
      for (const h of held) h.release();
    }
  });
});
