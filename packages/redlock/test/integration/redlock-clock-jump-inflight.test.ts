import { describe, expect, it } from 'vitest';
import { Lock, readEpoch, Redlock, RedlockError } from '@redlock-console/redlock';
import { uniquePrefix } from '@/test/support/cluster';
import { holdOnMajority, markCleanLevel } from '@/test/support/majority';
import { NO_PERSISTENCE, type RedisNode } from '@/test/support/redis-nodes';
import { shiftedClock, type ShiftedClock } from '@/test/support/clock-shim';
import { nodeOf } from '../support/lock-node';
import { testBed } from '../support/test-bed';

/**
 * A node's clock jumps while several of one client's probes are on the wire to it. The first reading
 * that sees the jump starts the node's clock-jump quarantine with a check written after them; the
 * clock check forgets its references at that moment. Each probe already on the wire (another batch
 * on the fast path, another replay after NOSCRIPT) must still count the node out: it reads a
 * sentinel with no quarantine yet, and a clock with no reference to compare. Until that check has
 * answered, the jump stays pending (clock-check.ts) and every reading counts the node out. Without
 * it node 3, on which A's key expired early by the jumped clock, voted for B beside A (found in review:
 * red in 3 of 3 runs on both paths).
 */
const MAX_TTL = 6_000;
let nodes: RedisNode[] = [];
let clock: ShiftedClock;
const bed = testBed({ maxTtlMs: MAX_TTL, retryCount: 0, nodeTimeoutMs: 2_000, nodeCheckIntervalMs: 60_000 }, { quietNodeErrors: true });
const client = bed.client;

async function attempt(r: Redlock, resources: string | string[]): Promise<Lock | Error> {
  return r.acquire(resources, 2_000, { fenced: true }).catch((e: Error) => e);
}

function votesOf(outcome: Lock | Error): unknown {
  return outcome instanceof Lock ? outcome.votes : (outcome as RedlockError).votes;
}

/**
 * Five nodes, node 3's clock movable; B warm on every node, A holding `res` on nodes 1–3. With
 * `replay`, node 3 loses its script cache and its clock jumps 10 s as B's first replay is written
 * (`replays()` counts them); else the test moves the clock itself.
 */
async function scene(name: string, warm: string | string[], replay: boolean) {
  clock = shiftedClock();
  nodes = await bed.start(
    () => NO_PERSISTENCE,
    5,
    (i) => (i === 2 ? clock.env : {}),
  );
  const prefix = uniquePrefix(name);
  const a = client(prefix);
  const b = client(prefix);
  await markCleanLevel(a, prefix, nodes);
  await (
    await (await b.acquire(warm, 2_000)).release()
  ).settled;
  const lockA = await holdOnMajority(a, 'res', nodes, 5_000);
  let count = 0;
  if (replay) {
    await nodes[2]!.client.script('FLUSH');
    const node = nodeOf(b, 2);
    const callBatch = node.callBatch.bind(node);
    node.callBatch = (commands, reply) => {
      if (count++ === 0) clock.set(10_000);
      callBatch(commands, reply);
    };
  }
  return { a, b, prefix, lockA, replays: () => count };
}

describe("probes on the wire when a node's clock jump is seen (grant.ts sendAlone, grant-group.ts force)", () => {
  it('control: a single replay is counted out (the committed fix)', async () => {
    const { b, lockA } = await scene('r2-replay-one', ['warm-1', 'warm-2'], true);
    const second = await attempt(b, ['res', 'other']);
    expect(second instanceof Lock, `B granted beside A: ${JSON.stringify(votesOf(second))}`).toBe(false);
    expect(lockA.validityMs).toBeGreaterThan(0);
  });

  it("the second replay, written before the first one's forced check, counts the node out too", async () => {
    const { b, lockA, replays } = await scene('r2-replay-two', ['warm-1', 'warm-2'], true);
    // One batch on node 3: both grants meet NOSCRIPT, both are replayed, in this order.
    const [first, second] = await Promise.all([attempt(b, ['x', 'y']), attempt(b, ['res', 'other'])]);
    expect(replays()).toBe(2);
    if (first instanceof Lock) await first.release();
    if (second instanceof Lock) {
      throw new Error(`two holders: B was granted (votes ${JSON.stringify(second.votes)}) while A holds (${lockA.validityMs} ms left)`);
    }
  });

  it("on the fast path, a batch written before the first batch's forced check counts the node out too", async () => {
    // GrantGroup.force (grant-group.ts) starts the quarantine with a check written after whatever
    // the node was sent before it; a second batch already on the wire reads the jumped TIME against
    // no reading at all (checkClock forgot them) and a sentinel with no quarantine yet: it votes for.
    const { b, prefix, lockA } = await scene('r2-group-two', 'warm', false);
    clock.set(10_000);
    const first = attempt(b, 'x');
    // The first batch is written on process.nextTick; the second one in the same turn of the loop,
    // before the first one's replies are read.
    await new Promise((r) => setImmediate(r));
    const second = await attempt(b, 'res');
    const one = await first;
    if (one instanceof Lock) await one.release();
    // The first batch did see the jump and started the quarantine: too late for the second.
    const cause = (await readEpoch(nodes[2]!.client, prefix))?.cause;
    if (second instanceof Lock) {
      throw new Error(
        `two holders: B was granted (votes ${JSON.stringify(second.votes)}) while A holds (${lockA.validityMs} ms left); quarantine cause ${cause}`,
      );
    }
  });

  it('control for the fast path: the same two acquires one after the other, the second is counted out', async () => {
    const { b, lockA } = await scene('r2-group-seq', 'warm', false);
    clock.set(10_000);
    const one = await attempt(b, 'x');
    if (one instanceof Lock) await (await one.release()).settled;
    const second = await attempt(b, 'res');
    expect(second instanceof Lock, `B granted beside A: ${JSON.stringify(votesOf(second))}`).toBe(false);
    expect(lockA.validityMs).toBeGreaterThan(0);
  });
});
