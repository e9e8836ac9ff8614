import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { isRedlockError, QuorumUnavailableError, Redlock, type RedlockSettings } from '@redlock-console/redlock';
import { NO_PERSISTENCE, startRedisNodes, type RedisNode } from '@/test/support/redis-nodes';

// The first run on brand-new masters, on real redis-server: an acquire before markNodesClean()
// says what to do (the error names markNodesClean() and the nodes without a sentinel), and
// markNodesClean() tells the truth: a node that refused it (an ACL user without INFO) is a vote
// against naming the node and Redis's reason, and fewer than a quorum marked is a rejection.
// Safety is untouched by both: the votes, the quarantine a node serves and what mark-clean.lua
// writes are the same as before; only the error's words and markNodesClean()'s answer change.

let nodes: RedisNode[] = [];
const redlocks: Redlock[] = [];

beforeAll(async () => {
  nodes = await startRedisNodes(() => NO_PERSISTENCE, 3);
  // A typical application user: everything but INFO (mark-clean.lua reads INFO server's run_id).
  for (const n of nodes) await n.client.call('ACL', 'SETUSER', 'noinfo', 'reset', 'on', '>noinfo-pw', '~*', '&*', '+@all', '-info');
});

afterAll(async () => {
  await Promise.all(redlocks.map((r) => r.quit()));
  await Promise.all(nodes.map((n) => n.stop()));
});

function redlock(urls: string[], keyPrefix: string, settings: Partial<RedlockSettings> = {}): Redlock {
  // 1 s per node: the subject is the missing sentinel, and at a load of 10 the default 100 ms read a
  // stalled test process as three timeout votes instead of three quarantined ones.
  const r = new Redlock(urls, { keyPrefix, retryCount: 0, nodeTimeoutMs: 1_000, ...settings });
  redlocks.push(r);
  return r;
}

const plain = () => nodes.map((n) => `redis://127.0.0.1:${n.port}`);
const noInfo = (n: RedisNode) => `redis://noinfo:noinfo-pw@127.0.0.1:${n.port}`;

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => null,
    (e: unknown) => e,
  );
}

describe('first run on brand-new masters', () => {
  it('an acquire before markNodesClean() names the fix and the nodes without a sentinel; after it, the acquire works', async () => {
    const prefix = 'first-run:';
    const r = redlock(plain(), prefix, { maxTtlMs: 30_000 });
    const first = await failure(r.acquire('job', 5_000));
    expect(first).toBeInstanceOf(QuorumUnavailableError);
    const err = first as QuorumUnavailableError;
    expect(err.message).toMatch(/markNodesClean\(\)/);
    expect(err.message).toMatch(/brand-new masters/);
    // The round may be decided before the last node answers: a quorum's worth at least.
    expect(err.missingSentinel.length).toBeGreaterThanOrEqual(2);
    for (const n of err.missingSentinel) expect(err.votes[n - 1]!.reason).toBe('quarantined');

    // Now in their data-loss quarantine (maxTtlMs): every acquire until it ends says the same.
    const again = (await failure(r.acquire('job', 5_000))) as QuorumUnavailableError;
    expect(isRedlockError(again) && again.name).toBe('QuorumUnavailableError');
    expect(again.message, JSON.stringify(again.votes)).toMatch(/markNodesClean\(\)/);
    expect(again.missingSentinel.length).toBeGreaterThanOrEqual(2);

    const marked = await r.markNodesClean();
    expect(marked).toMatchObject({ marked: 3, complete: true });
    expect(marked.votes.map((v) => v.reason)).toEqual(['ok', 'ok', 'ok']);
    const lock = await r.acquire('job', 5_000);
    expect(lock.fence).not.toBeNull();
    await lock.release();
  }, 60_000);

  it('a round that is merely unreachable does not blame markNodesClean()', async () => {
    const prefix = 'first-run-held:';
    const r = redlock(plain(), prefix);
    await r.markNodesClean();
    const a = await r.acquire('x', 10_000);
    const err = await failure(r.acquire('x', 1_000));
    expect(isRedlockError(err) && err.name).toBe('LockContendedError');
    expect(String((err as Error).message)).not.toMatch(/markNodesClean/);
    await a.release();
  }, 30_000);
});

describe('markNodesClean() tells the truth', () => {
  it('rejects, naming every node and its refusal, when an ACL user without INFO is refused everywhere; no sentinel is written', async () => {
    const prefix = 'mark-noinfo:';
    const r = redlock(nodes.map(noInfo), prefix);
    const events: number[] = [];
    r.on('node-error', (e) => events.push(e.node));
    const err = await failure(r.markNodesClean());
    expect(err).toBeInstanceOf(QuorumUnavailableError);
    const q = err as QuorumUnavailableError;
    expect(q.message).toMatch(/0 of 3 nodes marked clean/);
    for (const n of nodes) expect(q.message).toContain(`127.0.0.1:${n.port}`);
    expect(q.votes.map((v) => [v.node, v.vote, v.reason])).toEqual([
      [1, 'against', 'error'],
      [2, 'against', 'error'],
      [3, 'against', 'error'],
    ]);
    for (const v of q.votes) expect(v.detail).toMatch(/can't run this command|NOPERM/);
    expect(events.sort()).toEqual([1, 2, 3]);
    for (const n of nodes) expect(await n.client.exists(`${prefix}epoch`)).toBe(0);
  }, 30_000);

  it('resolves with the one refusal named (complete: false) when a quorum was marked', async () => {
    const prefix = 'mark-partial:';
    const urls = plain();
    urls[2] = noInfo(nodes[2]!);
    const r = redlock(urls, prefix);
    r.on('node-error', () => undefined);
    const result = await r.markNodesClean();
    expect(result.marked).toBe(2);
    expect(result.complete).toBe(false);
    expect(result.votes.map((v) => v.reason)).toEqual(['ok', 'ok', 'error']);
    expect(result.votes[2]!.detail).toMatch(/can't run this command|NOPERM/);
    expect(await nodes[0]!.client.exists(`${prefix}epoch`)).toBe(1);
    expect(await nodes[2]!.client.exists(`${prefix}epoch`)).toBe(0);
  }, 30_000);
});

describe('how long markNodesClean() waits', () => {
  it('a node that answers nothing is a timeout vote after the timeoutMs asked for; the others are marked', async () => {
    const prefix = 'mark-timeout:';
    const r = redlock(plain(), prefix);
    r.on('node-error', () => undefined);
    await r.connect();
    // Node 3 holds every client's commands for 3 s (its connections stay open): no answer, no
    // error. 2 s asked for: not the old fixed 1 s nor the 5 s default, and room for the other two
    // nodes' marks on a busy machine.
    await nodes[2]!.client.call('CLIENT', 'PAUSE', '3000', 'ALL');
    const result = await r.markNodesClean({ timeoutMs: 2_000 });
    expect(result.votes.map((v) => v.reason)).toEqual(['ok', 'ok', 'timeout']);
    expect(result.votes[2]!.detail).toMatch(/no answer to mark clean within 2000 ms; it may still reach the node/);
    // Once the pause is over, the late mark applies: the answer said it might.
    await vi.waitFor(async () => expect(await nodes[2]!.client.exists(`${prefix}epoch`)).toBe(1), { timeout: 10_000 });
  }, 30_000);

  it('refuses a timeoutMs that is not a whole number of ms from 1 to 60000, with InvalidArgumentError', async () => {
    const r = redlock(plain(), 'mark-bad:');
    for (const timeoutMs of [0, -5, 1.5, 60_001, Number.NaN, '300' as unknown as number]) {
      await expect(r.markNodesClean({ timeoutMs })).rejects.toMatchObject({ name: 'InvalidArgumentError', argument: 'timeoutMs' });
    }
    await expect(r.markNodesClean(null as unknown as object)).rejects.toMatchObject({ name: 'InvalidArgumentError' });
  });
});
