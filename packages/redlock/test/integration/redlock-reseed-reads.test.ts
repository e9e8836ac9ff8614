import { describe, expect, it } from 'vitest';
import {
  epochKey,
  legacyFenceKey,
  lockKey,
  markNodeClean,
  readFenceRegister,
  RedlockError,
  Redlock,
  type AcquireOptions,
  type NodeErrorEvent,
  type QuarantineEvent,
} from '@redlock-console/redlock';
import type { LockNode } from '../../src/node';
import type { ScriptCall } from '../../src/resp';
import { RESEED_SCRIPT } from '../../src/scripts';
import { uniquePrefix, waitFor } from '@/test/support/cluster';
import { MonitorFeed } from '@/test/support/monitor';
import { redlockEnv } from '@/test/support/redlock-env';

// reseed.ts: after a quarantine for a data loss, a node's fence register is raised to the maximum
// register of at least N − quorum + 1 OTHER nodes before it votes again (the argument is in
// reseed.ts). What counts as one of those reads is the safety question: a node that answered with
// an error, or did not answer, did not show its register, and counting it could leave the reseed
// below a fence that node confirmed; and a reseed whose write did not apply (the node lost its data
// again meanwhile) is no reseed. Found unkilled by mutation testing (docs/mutation.md).

const env = redlockEnv();
const MAX_TTL = 1_500;
/** Node 1 voting against: quarantined, or a timeout when its reseed's reads outlast the round. */
const AGAINST = /^(quarantined|timeout)$/;

/** A warm client; node 1 then loses its sentinel and is quarantined; resolves once that quarantine is over. */
async function quarantineOverOnNode1(prefix: string): Promise<{ r: Redlock; errors: NodeErrorEvent[] }> {
  for (const d of env.direct) await markNodeClean(d, { keyPrefix: prefix, maxTtlMs: MAX_TTL });
  const r = new Redlock(env.cluster.urls, { keyPrefix: prefix, maxTtlMs: MAX_TTL, retryCount: 0, nodeTimeoutMs: 500 });
  env.redlocks.push(r);
  const errors: NodeErrorEvent[] = [];
  const quarantines: QuarantineEvent[] = [];
  r.on('node-error', (e) => errors.push(e));
  r.on('quarantine', (e) => quarantines.push(e));
  await (await r.acquire('warm', 1_000)).release();
  await env.direct[0]!.del(epochKey(prefix)); // node 1 lost its data
  await r.acquire('x', 1_000).then((l) => l.release());
  await waitFor(() => quarantines.some((q) => q.node === 1 && q.discovered), 2_000, 'node 1 quarantined');
  const until = quarantines.find((q) => q.node === 1)!.until;
  await waitFor(() => Date.now() > until + 50, MAX_TTL + 3_000, 'the end of the quarantine');
  return { r, errors };
}

/** Node 1's vote in one acquire (the acquire's own outcome aside). */
async function node1Vote(r: Redlock, options: AcquireOptions = {}): Promise<string> {
  const outcome = await r.acquire('y', 1_000, options).catch((e: unknown) => e);
  if (outcome instanceof RedlockError) return outcome.votes[0]!.reason;
  if (outcome instanceof Error) throw outcome;
  const lock = outcome as Awaited<ReturnType<Redlock['acquire']>>;
  await lock.release();
  return lock.votes[0]!.reason;
}

describe('the reseed counts only registers it read', () => {
  it('two of the four other nodes answer the read with an error: too few registers, node 1 keeps voting against and says why', async () => {
    const prefix = uniquePrefix('reseed-err');
    const { r, errors } = await quarantineOverOnNode1(prefix);
    // GET of the old fence key fails (WRONGTYPE) on nodes 2 and 3: their answers show no register.
    for (const i of [1, 2]) await env.direct[i]!.hset(legacyFenceKey(prefix), 'x', '1');
    try {
      expect(await node1Vote(r)).toMatch(AGAINST);
      await waitFor(
        () => errors.some((e) => e.node === 1 && /owes a reseed.*2 of the 3 other nodes needed/.test(e.error.message)),
        2_000,
        'the reason',
      );
    } finally {
      for (const i of [1, 2]) await env.direct[i]!.del(legacyFenceKey(prefix));
    }
    // Once they answer, the reseed completes and node 1 votes again.
    await waitFor(async () => (await node1Vote(r)) === 'ok', 5_000, 'node 1 reseeded');
  });

  it('two of the four other nodes answer nothing: their silent reads are no registers, node 1 keeps voting against and says why', async () => {
    const prefix = uniquePrefix('reseed-silent');
    const { r, errors } = await quarantineOverOnNode1(prefix);
    try {
      for (const id of [2, 3]) await env.cluster.supervisor.pause(id);
      // The reseed's reads of nodes 2 and 3 wait out the node timeout (a paused node answers
      // nothing; only releases are refused at once by a stalled node, node.ts): 2 registers read.
      expect(await node1Vote(r)).toMatch(AGAINST);
      await waitFor(
        () => errors.some((e) => e.node === 1 && /owes a reseed.*2 of the 3 other nodes needed/.test(e.error.message)),
        3_000,
        'the reason',
      );
    } finally {
      for (const id of [2, 3]) await env.cluster.supervisor.resume(id);
    }
  });

  it('node 1 loses its data again between the reseed’s reads and its write: the write does not apply, and node 1 votes against', async () => {
    const prefix = uniquePrefix('reseed-cas');
    const { r, errors } = await quarantineOverOnNode1(prefix);
    // The reseed's write to node 1 waits until node 1 has lost its sentinel again (a second loss
    // found meanwhile): reseed.lua's compare-and-set on the sentinel refuses it.
    const node = (r as unknown as { nodes: LockNode[] }).nodes[0]!;
    const run = node.run.bind(node);
    node.run = (call: ScriptCall) =>
      call.script === RESEED_SCRIPT ? env.direct[0]!.del(epochKey(prefix)).then(() => run(call)) : run(call);
    // Nodes 2 and 3 hold the resource for someone else, so node 1's vote decides the round.
    for (const i of [1, 2]) await env.direct[i]!.set(lockKey(prefix, 'y'), 'someone-else', 'PX', 10_000);
    expect(await node1Vote(r)).toMatch(AGAINST);
    await waitFor(
      () => errors.some((e) => e.node === 1 && /did not apply: its sentinel changed/.test(e.error.message)),
      2_000,
      'the reason',
    );
  });

  it('the old fence key is a register too: written on another node after its last check, the reseed still reads it', async () => {
    const prefix = uniquePrefix('reseed-legacy');
    const { r } = await quarantineOverOnNode1(prefix);
    // Node 2's old fence key is written (as by an older client) just before the reseed reads node 2:
    // after node 2's probe of this round, so no probe has brought its register up to it.
    const highest = 5e15; // above node 1's quarantine floor (its clock × 1000, ≈ 1.8e15), below 2^53
    const node2 = (r as unknown as { nodes: LockNode[] }).nodes[1]!;
    const runBatch = node2.runBatch.bind(node2);
    let written = false;
    node2.runBatch = (commands: readonly Buffer[]) => {
      if (written || !commands[0]?.includes('HGET')) return runBatch(commands);
      written = true;
      return env.direct[1]!.set(legacyFenceKey(prefix), String(highest)).then(() => runBatch(commands));
    };
    // Unfenced: no fence round raises node 1's register, so what it holds is the reseed's doing.
    await waitFor(async () => (await node1Vote(r, { fenced: false })) === 'ok', 5_000, 'node 1 reseeded');
    expect(written).toBe(true);
    expect(await readFenceRegister(env.direct[0]!, prefix)).toBeGreaterThanOrEqual(highest);
  });

  it('a fenced grant with the reseeded node in its quorum is above the fence it lost: the node is judged by the register the reseed left', async () => {
    const prefix = uniquePrefix('reseed-fence');
    const { r } = await quarantineOverOnNode1(prefix);
    // A fence F was confirmed on nodes 1–3; node 1 lost it with its data. Nodes 2 and 3 now hold the
    // resource for someone else, so the grant's quorum is nodes 1, 4 and 5, and only node 1's
    // register (as the reseed left it, from nodes 2 and 3) shows F.
    const lost = 5e15; // above every clock-derived register and proposal (≈ 1.8e15), below 2^53
    for (const i of [1, 2]) {
      await env.direct[i]!.hset(epochKey(prefix), 'fence', String(lost));
      await env.direct[i]!.set(lockKey(prefix, 'y'), 'someone-else', 'PX', 10_000);
    }
    let granted = 0;
    await waitFor(
      async () => {
        const lock = await r.acquire('y', 1_000).catch(() => null);
        if (lock === null) return false;
        granted++;
        await lock.release();
        expect(lock.votes.map((v) => v.reason)).toEqual(['ok', 'contended', 'contended', 'ok', 'ok']);
        expect(lock.fence).toBeGreaterThan(lost);
        return true;
      },
      5_000,
      'a grant with node 1 reseeded',
    );
    expect(granted).toBe(1);
  });

  it('two of the four other nodes refuse the read at once (a closed connection): no registers either, node 1 keeps voting against and says why', async () => {
    const prefix = uniquePrefix('reseed-refused');
    const { r, errors } = await quarantineOverOnNode1(prefix);
    for (const i of [1, 2]) {
      const node = (r as unknown as { nodes: LockNode[] }).nodes[i]!;
      const runBatch = node.runBatch.bind(node);
      node.runBatch = (commands: readonly Buffer[]) =>
        commands[0]?.includes('HGET') ? Promise.reject(new Error('Connection is closed.')) : runBatch(commands);
    }
    // Nodes 2 and 3 hold the resource for someone else, so node 1's vote decides the round.
    for (const i of [1, 2]) await env.direct[i]!.set(lockKey(prefix, 'y'), 'someone-else', 'PX', 10_000);
    expect(await node1Vote(r)).toMatch(AGAINST);
    await waitFor(
      () => errors.some((e) => e.node === 1 && /owes a reseed.*2 of the 3 other nodes needed/.test(e.error.message)),
      2_000,
      'the reason',
    );
  });
});

// reseed.ts reseedNode: the grants that meet a node while its reseed is under way wait for that
// one, so the other nodes' registers are read once per reseed, not once per grant batch. (Two at
// once would still be safe: reseed.lua only ever raises the register, so each leaves it at or above
// the registers it read; what sharing saves is the reads and the writes.)
describe('one reseed of a node at a time', () => {
  it('a grant that meets the node while its reseed is under way shares it: each other node is read once', async () => {
    const prefix = uniquePrefix('reseed-shared');
    const { r } = await quarantineOverOnNode1(prefix);
    const read = `HGET ${epochKey(prefix)} fence`;
    const feed = await MonitorFeed.open(env.cluster.supervisor.directUrls()[1]!);
    const reads = () => feed.commands.filter((c) => c.source !== 'lua' && c.args.join(' ') === read).length;
    try {
      // Node 5 answers nothing: the reseed waits the node timeout for its read (nodes 2–4 are
      // enough), long enough for a second grant batch to meet node 1 meanwhile.
      await env.cluster.supervisor.pause(5);
      try {
        const first = r.acquire('p', 1_000).catch((e: unknown) => e);
        await waitFor(() => reads() === 1, 2_000, "the reseed's read on node 2");
        const second = r.acquire('q', 1_000).catch((e: unknown) => e);
        await Promise.all([first, second]);
      } finally {
        await env.cluster.supervisor.resume(5);
      }
      await waitFor(async () => (await node1Vote(r)) === 'ok', 5_000, 'node 1 reseeded');
      await feed.drain((marker) => env.direct[1]!.echo(marker));
      expect(reads()).toBe(1);
    } finally {
      feed.close();
    }
  });
});

// A client that meets the node for the first time once its quarantine is over judges it from a
// check of its own (grant.ts, not the batched grant-group.ts, which reseeds before it judges): the
// node votes against ("being raised", protocol.ts) and the reseed starts once that round is over.
describe('the reseed a first contact starts', () => {
  function freshClient(prefix: string): { r: Redlock; errors: NodeErrorEvent[] } {
    const r = new Redlock(env.cluster.urls, { keyPrefix: prefix, maxTtlMs: MAX_TTL, retryCount: 0, nodeTimeoutMs: 500 });
    env.redlocks.push(r);
    const errors: NodeErrorEvent[] = [];
    r.on('node-error', (e) => errors.push(e));
    return { r, errors };
  }

  async function firstContact(r: Redlock): Promise<void> {
    const outcome = await r.acquire('y', 1_000, { fenced: false }).catch((e: unknown) => e);
    if (!(outcome instanceof RedlockError)) throw new Error(`expected a refusal, got ${String(outcome)}`);
    expect(outcome.votes[0]).toMatchObject({ vote: 'against', reason: 'quarantined', detail: expect.stringMatching(/being raised/) });
  }

  it('raises the register without waiting for a later grant', async () => {
    const prefix = uniquePrefix('reseed-first');
    await quarantineOverOnNode1(prefix);
    const highest = 5e15; // above node 1's quarantine floor (its clock × 1000, ≈ 1.8e15), below 2^53
    await env.direct[1]!.hset(epochKey(prefix), 'fence', String(highest));
    // Nodes 2 and 3 hold the resource for someone else: the attempt fails whatever node 1 says.
    for (const i of [1, 2]) await env.direct[i]!.set(lockKey(prefix, 'y'), 'someone-else', 'PX', 10_000);
    const { r } = freshClient(prefix);
    await firstContact(r);
    await waitFor(async () => (await readFenceRegister(env.direct[0]!, prefix)) >= highest, 5_000, "node 1's register raised");
  });

  it('a reseed it cannot complete is reported as a node error', async () => {
    const prefix = uniquePrefix('reseed-first-err');
    await quarantineOverOnNode1(prefix);
    for (const i of [1, 2]) await env.direct[i]!.hset(legacyFenceKey(prefix), 'x', '1'); // their reads fail (WRONGTYPE)
    try {
      const { r, errors } = freshClient(prefix);
      await firstContact(r);
      await waitFor(
        () => errors.some((e) => e.node === 1 && /owes a reseed.*2 of the 3 other nodes needed/.test(e.error.message)),
        3_000,
        'the reason',
      );
    } finally {
      for (const i of [1, 2]) await env.direct[i]!.del(legacyFenceKey(prefix));
    }
  });
});
