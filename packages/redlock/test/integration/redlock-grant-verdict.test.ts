import { describe, expect, it } from 'vitest';
import { epochKey, lockKey, markNodeClean, readEpoch, Redlock, RedlockError, type QuarantineEvent } from '@redlock-console/redlock';
import { encodeCommand } from '../../src/resp';
import { uniquePrefix } from '@/test/support/cluster';
import { redlockEnv } from '@/test/support/redlock-env';
import { nodeOf } from '../support/lock-node';

// grant-verdict.ts: how one node's answers (the probe after the SET, the TIME before it, the grant)
// become its vote, and what a check tells the client about the cluster. Found unkilled by mutation
// testing (docs/mutation.md): a probe reply of another shape, the node's own words in a refusal, the
// ceiling conflict a check reports, and how often a node without a sentinel is checked.

const env = redlockEnv();

function freshClient(prefix: string, options: { maxTtlMs?: number; nodeCheckIntervalMs?: number } = {}): Redlock {
  const r = new Redlock(env.cluster.urls, { keyPrefix: prefix, retryCount: 0, nodeTimeoutMs: 2_000, ...options });
  env.redlocks.push(r);
  return r;
}

/** Nodes 2 and 3 hold `resource` for someone else: node 1's vote then decides the round, and is in it. */
async function heldElsewhere(prefix: string, resource: string): Promise<void> {
  for (const i of [1, 2]) await env.direct[i]!.set(lockKey(prefix, resource), 'someone-else', 'PX', 10_000);
}

/** The error of an acquire expected to fail. */
async function refusal(r: Redlock, resource: string, ttlMs = 1_000): Promise<RedlockError> {
  const outcome = await r.acquire(resource, ttlMs).catch((e: unknown) => e);
  if (!(outcome instanceof RedlockError)) throw new Error(`expected a refusal, got ${String(outcome)}`);
  return outcome;
}

/**
 * Resolve once every command this client sent node `index` before now has been answered, and so has
 * whatever those answers made it send there (each ECHO, a command of the client's own on that
 * connection, is answered after everything sent before it).
 */
async function settled(r: Redlock, index: number): Promise<void> {
  for (let round = 0; round < 2; round++) {
    await nodeOf(r, index).runBatch([encodeCommand(['ECHO', 'settled'])]);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

describe("a node's answers become its vote", () => {
  it('a check answered with a reply of another shape (as from a proxy answering out of order): the node votes error and says what it got, in 80 characters', async () => {
    const prefix = uniquePrefix('verdict-shape');
    const r = freshClient(prefix);
    await r.markNodesClean();
    await heldElsewhere(prefix, 'res');
    const node = nodeOf(r, 0);
    const runCheck = node.runCheck.bind(node);
    const other = Array.from({ length: 20 }, (_, i) => `field-${i}`);
    node.runCheck = (...args) => runCheck(...args).then((checked) => ({ ...checked, reply: other }));
    const failure = await refusal(r, 'res');
    const head = 'unexpected reply to the probe: ';
    expect(failure.votes[0]).toMatchObject({ vote: 'against', reason: 'error', detail: head + JSON.stringify(other).slice(0, 80) });
  });

  it('a node refusing the scripts (ACL): the vote says what the core needs and keeps the node’s own words', async () => {
    const prefix = uniquePrefix('verdict-acl');
    const r = freshClient(prefix);
    await r.markNodesClean();
    await heldElsewhere(prefix, 'res');
    const fresh = freshClient(prefix);
    try {
      await env.direct[0]!.call('ACL', 'SETUSER', 'default', '-eval', '-evalsha', '-eval_ro', '-evalsha_ro');
      const failure = await refusal(fresh, 'res');
      expect(failure.votes[0]).toMatchObject({ vote: 'against', reason: 'error' });
      expect(failure.votes[0]!.detail).toMatch(/refuses a command the lock core needs .*; its votes cannot count: NOPERM .*'eval/);
    } finally {
      await env.direct[0]!.call('ACL', 'SETUSER', 'default', '+@all');
    }
  });
  it('a sentinel that records no lease ceiling (written by hand, or by an older client): ceiling-mismatch, saying it records none', async () => {
    const prefix = uniquePrefix('verdict-no-ceiling');
    await freshClient(prefix).markNodesClean();
    await heldElsewhere(prefix, 'res');
    await env.direct[0]!.hdel(epochKey(prefix), 'maxTtlMs');
    const failure = await refusal(freshClient(prefix), 'res');
    expect(failure.votes[0]).toMatchObject({
      reason: 'ceiling-mismatch',
      detail: expect.stringMatching(/^the node records maxTtlMs none, this client uses \d+$/),
    });
  });
});

describe('what a check tells about the cluster', () => {
  it('a check that finds another lease ceiling stops a quarantine with this client’s, even with other nodes agreeing', async () => {
    const prefix = uniquePrefix('verdict-conflict');
    for (const d of env.direct) await markNodeClean(d, { keyPrefix: prefix, maxTtlMs: 1_000 });
    await env.direct[0]!.del(epochKey(prefix)); // node 1 lost its data
    await env.direct[1]!.del(epochKey(prefix)); // node 2 records another ceiling
    await markNodeClean(env.direct[1]!, { keyPrefix: prefix, maxTtlMs: 3_000 });
    const r = freshClient(prefix, { maxTtlMs: 1_000 });
    const quarantines: QuarantineEvent[] = [];
    r.on('quarantine', (e) => quarantines.push(e));
    // Node 1 answers last (500 ms late): by then nodes 3–5 agreed with this client's ceiling and
    // node 2's check reported its other one, so the start that node 1's answer asks for has both.
    await env.cluster.supervisor.act(1, { action: 'latency', latencyMs: 500, jitterMs: 0 });
    try {
      await (await r.acquire('res', 1_000)).release();
      await settled(r, 0);
    } finally {
      await env.cluster.supervisor.act(1, { action: 'heal' });
    }
    // A quarantine lasting this client's 1 s could end while leases granted under node 2's 3 s stand.
    expect(await readEpoch(env.direct[0]!, prefix)).toBeNull();
    expect(quarantines).toEqual([]);
  });

  it('a node without a sentinel that this client may not quarantine is not checked again before the check interval', async () => {
    const prefix = uniquePrefix('verdict-checks');
    for (const d of env.direct) await markNodeClean(d, { keyPrefix: prefix, maxTtlMs: 3_000 });
    await env.direct[0]!.del(epochKey(prefix)); // node 1 lost its data
    // This client's ceiling is no node's: it may start no quarantine (grant-plan.ts ClusterView).
    const r = freshClient(prefix, { maxTtlMs: 1_000, nodeCheckIntervalMs: 60_000 });
    await refusal(r, 'a'); // the first contact checks every node
    const node = nodeOf(r, 0);
    let checks = 0;
    const runCheck = node.runCheck.bind(node);
    node.runCheck = (...args) => {
      checks++;
      return runCheck(...args);
    };
    for (const resource of ['b', 'c', 'd']) {
      expect((await refusal(r, resource)).name).toBe('MaxTtlMismatchError');
    }
    await settled(r, 0);
    expect(checks).toBe(0);
  });
});

/** Node `index`'s clock in ms (TIME). */
async function nodeMs(index: number): Promise<number> {
  const [sec, micro] = (await env.direct[index]!.time()) as [string | number, string | number];
  return Number(sec) * 1000 + Math.floor(Number(micro) / 1000);
}

/** A quarantine written on node `index` by hand (as another client's check writes one): from `fromMs` to `untilMs`. */
async function quarantineOn(prefix: string, index: number, fromMs: number, untilMs: number): Promise<void> {
  await env.direct[index]!.hset(epochKey(prefix), 'createdAt', String(fromMs), 'quarantineUntil', String(untilMs));
}

// Whether a grant sends TIME before its SET (grant-verdict.ts epochVerdict): only while the node may
// be quarantined, since "its quarantine is over" must be a statement about a moment before the SET.
describe("when a grant asks a node's TIME", () => {
  it('a node found without a sentinel is asked again: a quarantine already over when its sentinel reappears does not cost a vote', async () => {
    const prefix = uniquePrefix('verdict-time-lost');
    for (const d of env.direct) await markNodeClean(d, { keyPrefix: prefix, maxTtlMs: 3_000 });
    await env.direct[0]!.del(epochKey(prefix)); // node 1 lost its data
    // A client whose ceiling is no node's: it may start no quarantine, so its check of node 1 leaves
    // it without a sentinel (a `lost` verdict).
    const r = freshClient(prefix, { maxTtlMs: 1_000, nodeCheckIntervalMs: 60_000 });
    await refusal(r, 'a');
    // Node 1's sentinel comes back (another client's check) with a quarantine over by now.
    await markNodeClean(env.direct[0]!, { keyPrefix: prefix, maxTtlMs: 1_000 });
    const now = await nodeMs(0);
    await quarantineOn(prefix, 0, now - 2_000, now - 1_000);
    // The other nodes answer 300 ms late, so node 1's vote is in the round's votes.
    for (const id of [2, 3, 4, 5]) await env.cluster.supervisor.act(id, { action: 'latency', latencyMs: 300, jitterMs: 0 });
    try {
      const failure = await refusal(r, 'b');
      expect(failure.votes[0]).toMatchObject({ vote: 'for', reason: 'ok' });
    } finally {
      for (const id of [2, 3, 4, 5]) await env.cluster.supervisor.act(id, { action: 'heal' });
    }
  });

  it('once a quarantine is seen over, the next grants send no TIME before their SET', async () => {
    const prefix = uniquePrefix('verdict-time-over');
    const r = freshClient(prefix, { nodeCheckIntervalMs: 60_000 });
    await r.markNodesClean();
    await (await r.acquire('warm', 1_000)).release();
    await heldElsewhere(prefix, 'res'); // node 1's vote decides every attempt below
    const now = await nodeMs(0);
    await quarantineOn(prefix, 0, now, now + 300);
    // Attempts until node 1 is seen with its quarantine over (it votes for, and the lock is granted).
    let granted = false;
    const deadline = performance.now() + 10_000;
    while (!granted) {
      if (performance.now() > deadline) throw new Error('node 1 still quarantined 10 s after its 300 ms quarantine');
      const outcome = await r.acquire('res', 1_000, { fenced: false }).catch((e: unknown) => e);
      if (outcome instanceof RedlockError) continue;
      if (outcome instanceof Error) throw outcome;
      granted = true;
      await (outcome as Awaited<ReturnType<Redlock['acquire']>>).release();
    }
    // Then: node 1's commands for two more grants, in the order sent.
    const node = nodeOf(r, 0);
    const sent: string[] = [];
    const sendReserved = node.sendReserved.bind(node);
    node.sendReserved = (payload, reply) => {
      sent.push(payload.toString('latin1'));
      sendReserved(payload, reply);
    };
    for (let i = 0; i < 2; i++) await (await r.acquire('res', 1_000, { fenced: false })).release();
    await settled(r, 0);
    // TIME right before a SET is the verdict's TIME (the fast probe's own TIME comes after MULTI).
    const timeBeforeSet = sent.filter((c, i) => /\r\nTIME\r\n$/.test(c) && /\r\nSET\r\n/.test(sent[i + 1] ?? '')).length;
    expect(sent.filter((c) => /\r\nSET\r\n/.test(c))).toHaveLength(2);
    expect(timeBeforeSet).toBe(0);
  });
});
