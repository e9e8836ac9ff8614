import { describe, expect, it } from 'vitest';
import {
  LockContendedError,
  QuorumUnavailableError,
  Redlock,
  RedlockError,
  readEpoch,
  tokenOf,
  type QuarantineEvent,
} from '@redlock-console/redlock';
import { uniquePrefix, waitFor } from '@/test/support/cluster';
import { redlockEnv } from '@/test/support/redlock-env';

const env = redlockEnv();
const { redlocks, unhandled } = env;
const MAX_TTL = 2_000;

function client(prefix: string, quarantine = true): Redlock {
  const r = new Redlock(env.cluster.urls, { keyPrefix: prefix, maxTtlMs: MAX_TTL, retryCount: 0, nodeTimeoutMs: 1_000, quarantine });
  redlocks.push(r);
  return r;
}

/**
 * Node `index`'s own vote, seen through a one-node Redlock (quorum 1): its grant batch writes the
 * key whatever the vote, so the key on the node proves nothing; the vote does.
 */
async function voteOf(prefix: string, index: number, resource: string): Promise<string> {
  const one = new Redlock([env.cluster.urls[index]!], { keyPrefix: prefix, maxTtlMs: MAX_TTL, retryCount: 0, nodeTimeoutMs: 1_000 });
  redlocks.push(one);
  const outcome = await one.acquire(resource, 500, { fenced: false }).catch((e: unknown) => e);
  if (outcome instanceof QuorumUnavailableError) return outcome.votes[0]!.reason;
  await (outcome as { release(): Promise<unknown> }).release();
  return 'ok';
}

/**
 * Acquire until node `index` answers something other than a connection error (our clients reconnect
 * after a restart) or a late reply (a client's first contact with a node is a check, which a
 * loaded machine may answer after nodeTimeoutMs).
 */
async function acquireOnceAnswered(r: Redlock, resource: string, index: number) {
  let outcome: unknown = null;
  await waitFor(
    async () => {
      outcome = await r.acquire(resource, 1_000).catch((e: unknown) => e);
      return !(outcome instanceof RedlockError && /^(error|timeout|pending)$/.test(outcome.votes[index]?.reason ?? ''));
    },
    5_000,
    `node ${index + 1} to answer`,
  );
  return outcome;
}

/**
 * The seeds' restart scenario (distlock page, "Performance, crash-recovery and fsync"): A locks a
 * majority, one of its nodes restarts empty, and the lock can be granted again to B while A holds it.
 */
async function restartScenario(prefix: string) {
  const a = client(prefix);
  await a.markNodesClean();
  await env.cluster.supervisor.partition(4);
  await env.cluster.supervisor.partition(5);
  const lockA = await a.acquire('res', MAX_TTL);
  // The proxies hold A's SETs to 4 and 5 and would deliver them on heal: drop them, as a real
  // partition eventually does (the connections are reset), so A holds exactly nodes 1, 2 and 3.
  await env.cluster.supervisor.act(4, { action: 'reset' });
  await env.cluster.supervisor.act(5, { action: 'reset' });
  await env.cluster.supervisor.crash(3);
  await env.cluster.supervisor.restart(3, { persistence: 'none' });
  await env.cluster.supervisor.heal(4);
  await env.cluster.supervisor.heal(5);
  expect((await Promise.all(env.direct.map((c) => c.get(a.lockKey('res'))))).map((v) => v && tokenOf(v))).toEqual([
    lockA.token,
    lockA.token,
    null,
    null,
    null,
  ]);
  return lockA;
}

describe('quarantine after data loss (epoch sentinel)', () => {
  it('negative control, quarantine: false: B is granted the lock A still holds, two holders at once', async () => {
    const prefix = uniquePrefix('unsafe');
    const lockA = await restartScenario(prefix);
    const b = client(prefix, false);
    const lockB = await acquireOnceAnswered(b, 'res', 2);
    // The safety violation the quarantine exists to prevent:
    expect(lockB).toMatchObject({ resources: ['res'] });
    expect(lockA.validityMs).toBeGreaterThan(0);
    expect((lockB as { validityMs: number }).validityMs).toBeGreaterThan(0);
    expect((lockB as { token: string }).token).not.toBe(lockA.token);
  });

  it('default: B is refused with a quarantined vote until maxTtl has passed, then succeeds', async () => {
    const prefix = uniquePrefix('safe');
    const lockA = await restartScenario(prefix);
    const b = client(prefix);
    const events: QuarantineEvent[] = [];
    b.on('quarantine', (e) => events.push(e));
    // Found a while after A's grant, so the quarantine outlasts A's lease by at least that while.
    // pace: found a while after A's grant, so the quarantine outlasts A's lease by that while
    await new Promise((res) => setTimeout(res, 500));

    const refused = await acquireOnceAnswered(b, 'res', 2);
    // A's keys on nodes 1 and 2 stand in the way (with them free, B would have had a quorum):
    // contention, with node 3's quarantine among the votes.
    expect(refused).toBeInstanceOf(LockContendedError);
    const votes = (refused as LockContendedError).votes;
    // The node has no sentinel: it votes quarantined at once, and the quarantine it starts is
    // reported by the event (scripts/quarantine.lua) right after.
    expect(votes[2]).toMatchObject({ vote: 'against', reason: 'quarantined' });
    await waitFor(() => events.length > 0, 1_000, 'the quarantine event');
    const until = events[0]!.until;
    expect(until).toBeGreaterThan(Date.now() + MAX_TTL - 1_000);
    expect(until).toBeLessThanOrEqual(Date.now() + MAX_TTL + 50);
    expect(events[0]).toMatchObject({ node: 3, until, discovered: true }); // node 3 = votes[2]
    expect(lockA.validityMs).toBeGreaterThan(0); // A still holds: refusing B is what keeps it exclusive

    // The sentinel the acquire script wrote, with the server start from INFO.
    const epoch = await readEpoch(env.direct[2]!, prefix);
    expect(epoch).toMatchObject({ origin: 'quarantine', quarantineUntil: until, maxTtlMs: MAX_TTL });
    expect(epoch!.serverStartedAt).toBeLessThanOrEqual(epoch!.createdAt);

    // Once A's keys are gone everywhere, four nodes can grant: B gets the lock (safely: A's lease
    // is over) while node 3 still votes quarantined.
    await waitFor(
      async () => (await Promise.all(env.direct.map((c) => c.exists(b.lockKey('res'))))).every((x) => x === 0),
      MAX_TTL + 500,
      "A's keys to expire",
    );
    expect(Date.now()).toBeLessThan(until - 100);
    const during = await b.acquire('res', 500);
    expect(during.votes[2]!.reason).toMatch(/quarantined|pending/);
    expect(await voteOf(prefix, 2, 'probe')).toBe('quarantined');
    await waitFor(async () => tokenOf((await env.direct[4]!.get(b.lockKey('res'))) ?? '') === during.token, 1_000, 'the last vote');
    // Node 3 voted against; its SET NX may have landed (the grant and the quarantine check are
    // separate commands, see src/grant.ts): a key on a node that did not vote for us is
    // ordinary, and the release removes it.
    await (
      await during.release()
    ).settled;
    expect(await env.direct[2]!.get(b.lockKey('res'))).toBeNull();

    // After the quarantine, node 3 votes again.
    await waitFor(() => Date.now() > until + 20, MAX_TTL + 1_000, 'the end of the quarantine');
    const lockB = await b.acquire('res', 1_000);
    expect(lockB.votes[2]!.reason).toMatch(/ok|pending/);
    await lockB.release();
    expect(await voteOf(prefix, 2, 'probe')).toBe('ok');
  });

  it('FLUSHALL (data loss without a restart) is caught too; markNodesClean ends a quarantine at once', async () => {
    const prefix = uniquePrefix('flush');
    const r = client(prefix);
    await r.markNodesClean();
    await env.direct[0]!.flushall();
    const refused = await r.acquire('x', 1_000).catch((e: unknown) => e);
    // One quarantined node of five does not stop a grant.
    expect(refused).toMatchObject({ resources: ['x'] });
    // Decided at the quorum, so node 1's own vote may still be pending here; asked alone, it refuses.
    expect((refused as { votes: Array<{ reason: string }> }).votes[0]!.reason).toMatch(/quarantined|pending/);
    await (refused as { release(): Promise<unknown> }).release();
    expect(await voteOf(prefix, 0, 'probe')).toBe('quarantined');
    // Every node marked, node 1 included: markNodesClean resolves at a quorum, and a node it did
    // not reach in time (a loaded machine) would still be quarantined below.
    expect(await r.markNodesClean()).toMatchObject({ complete: true });
    const lock = await r.acquire('x', 1_000);
    // Node 1 votes again: never quarantined now (for, or still pending at the early decision).
    expect(lock.votes[0]!.reason).not.toBe('quarantined');
    expect(await readEpoch(env.direct[0]!, prefix)).toMatchObject({ origin: 'clean' });
    await lock.release();
    expect(await voteOf(prefix, 0, 'probe')).toBe('ok');
  });

  it('a prefix never marked clean starts quarantined (a ttl above maxTtlMs is refused up front)', async () => {
    const r = client(uniquePrefix('never-marked'));
    const err = await r.acquire('x', 1_000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(QuorumUnavailableError);
    const reasons = (err as QuorumUnavailableError).votes.map((v) => v.reason);
    // Decided at the third quarantined vote; the rest may still be pending.
    expect(reasons.filter((x) => x === 'quarantined').length).toBeGreaterThanOrEqual(3);
    expect(reasons.every((x) => x === 'quarantined' || x === 'pending')).toBe(true);
    await expect(r.acquire('x', MAX_TTL + 1)).rejects.toMatchObject({ name: 'InvalidArgumentError' });
  });

  it('no unhandled rejections happened in this file', () => {
    expect(unhandled).toEqual([]);
  });
});
