import { afterEach, describe, expect, it } from 'vitest';
import { LockExpiredError, QuorumUnavailableError, Redlock, type Lock, type RedlockSettings } from '@redlock-console/redlock';
import { uniquePrefix, waitFor } from '@/test/support/cluster';
import { redlockEnv } from '@/test/support/redlock-env';

const env = redlockEnv();
const { redlocks, unhandled } = env;
const sleep = (ms: number) => new Promise((res) => setTimeout(res, ms));

// Every test leaves the network healthy and every node up.
afterEach(async () => {
  for (const node of env.cluster.supervisor.nodes()) {
    if (node.state === 'down') await env.cluster.supervisor.start(node.id, 'none');
    if (node.fault?.kind !== 'pass') await env.cluster.supervisor.heal(node.id);
  }
});

async function redlock(name: string, settings: Partial<RedlockSettings> = {}): Promise<Redlock> {
  const r = new Redlock(env.cluster.urls, { keyPrefix: uniquePrefix(name), retryCount: 0, ...settings });
  redlocks.push(r);
  await r.markNodesClean();
  return r;
}

/** Every lock key of `r`'s prefix, on every node (read directly, bypassing the proxies). */
async function leftovers(r: Redlock): Promise<string[]> {
  const keys = await Promise.all(env.direct.map((c) => c.keys(`${r.settings.keyPrefix}*`)));
  return keys.flat().filter((k) => k.includes(':lock:'));
}

describe('Redlock under faults (fault proxies and real process crashes)', () => {
  it('2 of 5 nodes blackholed: acquire, extend and release still succeed', async () => {
    // A node timeout of 2 s, which load cannot reach but waiting for the silent nodes would: the
    // answers below come at the quorum, well before it (at 100 ms, a loaded machine's 170 ms
    // acquire read as a wait for the timeout).
    const r = await redlock('two-down', { nodeTimeoutMs: 2_000 });
    await env.cluster.supervisor.partition(4);
    await env.cluster.supervisor.partition(5);
    const t0 = performance.now();
    const lock = await r.acquire('res', 5_000);
    // Decided at the quorum: no wait for the silent nodes' timeout.
    expect(performance.now() - t0).toBeLessThan(r.settings.nodeTimeoutMs / 2);
    expect(lock.fence).not.toBeNull();
    await lock.extend(5_000);
    // Answered at the quorum (the silent nodes are still pending), settled at their timeout.
    const t1 = performance.now();
    const answered = await lock.release();
    expect(performance.now() - t1).toBeLessThan(r.settings.nodeTimeoutMs / 2);
    expect(answered.votes.slice(3).map((v) => v.reason)).toEqual(['pending', 'pending']);
    const released = await answered.settled;
    expect(released.deleted).toBe(3);
    expect(released.complete).toBe(false);
    expect(released.votes.slice(3).map((v) => v.reason)).toEqual(['timeout', 'timeout']);
  });

  it('3 of 5 blackholed: QuorumUnavailableError within about nodeTimeoutMs, and after healing nothing of the attempt remains', async () => {
    // A node timeout of 1 s, which a loaded machine's stall does not reach (at 100 ms the two
    // reachable nodes' votes read as timeouts too); waiting on past it for the cleanup of the
    // silent nodes would take a second one.
    const r = await redlock('three-down', { nodeTimeoutMs: 1_000 });
    const errors: string[] = [];
    r.on('node-error', (e) => errors.push(e.error.name));
    for (const id of [3, 4, 5]) await env.cluster.supervisor.partition(id);
    const t0 = performance.now();
    const err = await r.acquire('res', 5_000).catch((e: unknown) => e);
    const elapsed = performance.now() - t0;
    expect(err).toBeInstanceOf(QuorumUnavailableError);
    expect(elapsed).toBeGreaterThanOrEqual(r.settings.nodeTimeoutMs - 5);
    expect(elapsed).toBeLessThan(r.settings.nodeTimeoutMs * 1.9);
    const votes = (err as QuorumUnavailableError).votes;
    expect(votes.map((v) => v.reason)).toEqual(['ok', 'ok', 'timeout', 'timeout', 'timeout']);
    // The two reachable nodes were cleaned up at once.
    await waitFor(async () => (await leftovers(r)).length === 0, 1_000, 'cleanup on the reachable nodes');
    // The proxies held the SETs (and the releases sent after them) and deliver both, in order, on heal.
    for (const id of [3, 4, 5]) await env.cluster.supervisor.heal(id);
    // absence: 300 ms for the healed proxies' held SETs and releases; no key may be left
    await sleep(300);
    expect(await leftovers(r)).toEqual([]);
    // The cleanup is awaited, but not for the nodes that let the grant round's whole deadline
    // pass (stalled): they are not reported again for it.
    expect(errors.filter((name) => name === 'NodeStalledError')).toEqual([]);
  });

  it('a node that let a whole round pass unanswered: releases stop waiting for it, and still reach it', async () => {
    // A node timeout of 2 s, which load cannot reach but a release waiting for the stalled node would.
    const r = await redlock('stalled', { nodeTimeoutMs: 2_000 });
    await r.connect();
    const stalledErrors: string[] = [];
    r.on('node-error', (e) => {
      if (e.error.name === 'NodeStalledError') stalledErrors.push(e.label);
    });
    await env.cluster.supervisor.partition(5);
    // Decided by the four others; node 5 is only late, nothing is known about it yet.
    const first = await r.acquire('a', 5_000, { fenced: false });
    expect(first.votes[4]!.reason).toBe('pending');
    // The release's outcome waits for every node: node 5 lets the whole nodeTimeoutMs pass.
    const released = await (await first.release()).settled;
    expect(released.votes[4]!.reason).toBe('timeout');
    // From now on node 5 is stalled: a release knows its vote at once instead of waiting nodeTimeoutMs.
    const t0 = performance.now();
    const second = await r.acquire('b', 5_000, { fenced: false });
    const again = await (await second.release()).settled;
    expect(performance.now() - t0).toBeLessThan(r.settings.nodeTimeoutMs / 2);
    expect(second.votes[4]!.reason).toBe('pending');
    expect(again.votes[4]).toMatchObject({ reason: 'error', detail: expect.stringContaining('has not answered') as string });
    expect(again.complete).toBe(false);
    expect(stalledErrors).toEqual([r.nodeLabels[4]]);
    // On heal the proxy delivers what it held, in order: each grant, then its release (sent although
    // nobody waited for it). Nothing is left, and node 5's releases are awaited again.
    await env.cluster.supervisor.heal(5);
    await waitFor(async () => (r as unknown as { nodes: Array<{ pending: number }> }).nodes[4]!.pending === 0, 2_000, 'node 5 answering');
    expect(await leftovers(r)).toEqual([]);
    const third = await r.acquire('c', 5_000, { fenced: false });
    const done = await (await third.release()).settled;
    expect(done.votes[4]).toMatchObject({ vote: 'for', reason: 'ok' });
    expect(done.complete).toBe(true);
  });

  it('crashed nodes fail fast: no wait for a node timeout when the answer is known', async () => {
    const r = await redlock('crashed', { nodeTimeoutMs: 2_000 });
    await r.acquire('warm', 1_000).then((l) => l.release());
    for (const id of [1, 2, 3]) await env.cluster.supervisor.crash(id);
    const t0 = performance.now();
    const err = await r.acquire('res', 5_000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(QuorumUnavailableError);
    // Well below the 2 s node timeout it would wait out, whatever the load.
    expect(performance.now() - t0).toBeLessThan(r.settings.nodeTimeoutMs / 2);
    expect((err as QuorumUnavailableError).votes.slice(0, 3).map((v) => v.reason)).toEqual(['error', 'error', 'error']);
  });

  it('latency close to the ttl: the attempt fails on validity (LockExpiredError) and cleans up', async () => {
    // nodeTimeoutMs above the ttl, so validity, not the node timeout, is what runs out.
    const r = await redlock('latency', { nodeTimeoutMs: 1_000 });
    for (const id of [1, 2, 3, 4, 5]) await env.cluster.supervisor.act(id, { action: 'latency', latencyMs: 260 });
    const t0 = performance.now();
    const err = await r.acquire('slow', 250).catch((e: unknown) => e);
    const elapsed = performance.now() - t0;
    expect(err).toBeInstanceOf(LockExpiredError);
    expect((err as LockExpiredError).message).toMatch(/validity ran out/);
    // It gave up at the validity horizon (ttl − drift), then waited for its cleanup, which the
    // slow nodes answer (bounded by nodeTimeoutMs): when acquire() rejects, nothing is left.
    expect(elapsed).toBeLessThan(250 + 1_000);
    expect(await leftovers(r)).toEqual([]);
    for (const id of [1, 2, 3, 4, 5]) await env.cluster.supervisor.heal(id);
  });

  it('extend with a minority fails (the old validity still holds); with a majority it works', async () => {
    // Node timeouts of 1 s (a loaded machine's stall is not a timeout vote) and 10 s leases, which
    // the failed extension's wait for the silent majority leaves well over half of.
    const r = await redlock('extend-minority', { nodeTimeoutMs: 1_000 });
    const lock = await r.acquire('e', 10_000);
    for (const id of [1, 2, 3]) await env.cluster.supervisor.partition(id);
    const err = await lock.extend(10_000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(QuorumUnavailableError);
    expect(lock.validityMs).toBeGreaterThan(5_000);
    for (const id of [1, 2, 3]) await env.cluster.supervisor.heal(id);
    await env.cluster.supervisor.partition(5);
    await env.cluster.supervisor.partition(4);
    // pace: the partitions are in place before the extend
    await sleep(100);
    const before = lock.validityMs;
    await lock.extend(10_000);
    expect(lock.validityMs).toBeGreaterThan(before);
    await lock.release();
  });

  it('using(): extends past the first ttl and releases at the end', async () => {
    // Node timeouts of 1 s and a 1 s ttl (extended with 500 ms left): a loaded machine's stalls
    // read as neither timeout votes nor an expired lease; the routine runs until two extensions.
    const r = await redlock('using', { nodeTimeoutMs: 1_000 });
    const rival = new Redlock(env.cluster.urls, { keyPrefix: r.settings.keyPrefix, retryCount: 0, nodeTimeoutMs: 1_000 });
    redlocks.push(rival);
    let seen: Lock | null = null;
    const result = await r.using('job', 1_000, async (signal, lock) => {
      seen = lock;
      for (let i = 0; lock.extensions < 2; i++) {
        expect(i).toBeLessThan(100); // 10 s: far past the two extensions due at 0.5 s and 1 s
        // poll: until two extensions have run
        await sleep(100);
        expect(signal.aborted).toBe(false);
        expect(lock.validityMs).toBeGreaterThan(0);
      }
      await expect(rival.acquire('job', 1_000)).rejects.toMatchObject({ name: 'LockContendedError' });
      return 'done';
    });
    expect(result).toBe('done');
    expect(seen!.extensions).toBeGreaterThanOrEqual(2);
    expect(seen!.released).toBe(true);
    expect(await leftovers(r)).toEqual([]);
  });

  it('using(): the signal aborts with the reason when a majority is blackholed mid-routine, and it still releases', async () => {
    // Node timeouts of 1 s (load does not read as timeout votes), and the extension due with 2 s of
    // validity left: the partitioned majority times out (QuorumUnavailableError) before the
    // validity runs out (which would be LockExpiredError).
    const r = await redlock('using-abort', { nodeTimeoutMs: 1_000, automaticExtensionThresholdMs: 2_000 });
    const lost: Error[] = [];
    r.on('lock-lost', (e) => lost.push(e.reason));
    const reason = await r.using('job', 4_000, async (signal) => {
      // work: the holder works a while before the partition
      await sleep(50);
      for (const id of [1, 2, 3]) await env.cluster.supervisor.partition(id);
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      return signal.reason as Error;
    });
    expect(reason).toBeInstanceOf(QuorumUnavailableError);
    expect(lost).toEqual([reason]);
    for (const id of [1, 2, 3]) await env.cluster.supervisor.heal(id);
    await waitFor(async () => (await leftovers(r)).length === 0, 2_000, 'released everywhere after heal');
  });

  it("using(): a lock whose keys are gone fires 'lock-lost' once, not once for the extend and again for using()", async () => {
    // A node timeout of 1 s: a loaded machine's stall is not a timeout vote.
    const r = await redlock('using-lost-once', { nodeTimeoutMs: 1_000 });
    const lost: Error[] = [];
    r.on('lock-lost', (e) => lost.push(e.reason));
    const reason = await r.using('job', 600, async (signal, lock) => {
      // Someone deletes the keys (an operator's force-release): the next extension finds them gone.
      await Promise.all(env.direct.map((c) => c.del(lock.keys[0]!)));
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      // Past the lease too: the expiry timer must not report it again either.
      // absence: 700 ms past the lease, in which the expiry timer must not report again
      await sleep(700);
      return signal.reason as Error;
    });
    expect(reason).toBeInstanceOf(LockExpiredError);
    expect(lost).toEqual([reason]);
  });

  it('using(): always releases and rethrows when the routine throws; maxExtensions bounds it', async () => {
    // Node timeouts of 1 s and a 1 s ttl below: load reads as neither timeout votes nor a lease
    // that ran out before its one extension.
    const r = await redlock('using-throw', { maxExtensions: 1, nodeTimeoutMs: 1_000 });
    await expect(
      r.using('job', 1_000, async () => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await leftovers(r)).toEqual([]);

    const reason = await r.using('job', 1_000, async (signal) => {
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      return signal.reason as Error;
    });
    expect(reason).toBeInstanceOf(LockExpiredError);
    expect(reason.message).toMatch(/maxExtensions/);
    expect(await leftovers(r)).toEqual([]);
  });

  it('a blackholed node does not pile up commands without bound', async () => {
    const r = await redlock('backlog', { maxPendingPerNode: 20, nodeTimeoutMs: 1_000 });
    // Connected first: batches for a node still connecting count against its bound too.
    await r.connect();
    const backlogErrors: string[] = [];
    r.on('node-error', (e) => {
      if (e.error.name === 'NodeBacklogError') backlogErrors.push(e.label);
    });
    await env.cluster.supervisor.partition(5);
    // Each acquire is decided by the four healthy nodes; its command to node 5 waits in the proxy.
    const locks = [];
    for (let i = 0; i < 60; i++) locks.push(await r.acquire(`k${i}`, 5_000, { fenced: false }));
    const pending = (r as unknown as { nodes: Array<{ pending: number }> }).nodes[4]!.pending;
    // 60 grant batches were sent its way. Each reserves up to 6 commands under the bound (TIME,
    // which a node that never answered is still asked for; SET NX GET; the fast probe's MULTI,
    // SCRIPT EXISTS, HMGET, EXEC) and sends 3 of them here (TIME, SET, and a check: the node was
    // never checked): the batches wait in the proxy until the next one's 6 would pass 20, the others
    // failed at once (more if an attempt had to retry: its cleanup release is refused too).
    expect(pending).toBeLessThanOrEqual(20);
    expect(pending).toBeGreaterThan(20 - 6);
    const waiting = pending / 3;
    // (A healthy node that lags a few acquires behind on a loaded box may briefly hit the bound too.)
    expect(backlogErrors.filter((label) => label === r.nodeLabels[4]).length).toBeGreaterThanOrEqual(60 - waiting);
    expect(locks[59]!.votes[4]).toMatchObject({ reason: expect.stringMatching(/error|pending/) });
    await Promise.all(locks.map((l) => l.release()));
  });

  it('no unhandled rejections happened in this file', () => {
    expect(unhandled).toEqual([]);
  });
});
