import { describe, expect, it } from 'vitest';
import { epochKey, markNodeClean, readEpoch, Redlock, type NodeErrorEvent, type QuarantineEvent } from '@redlock-console/redlock';
import { uniquePrefix, waitFor } from '@/test/support/cluster';
import { MonitorFeed } from '@/test/support/monitor';
import { redlockEnv } from '@/test/support/redlock-env';
import { nodeOf } from '../support/lock-node';

// quarantine-start.ts: a node answers without a sentinel (its data is gone) to a client that has
// not yet seen any node confirm its lease ceiling, so the grant's own check could not start the
// quarantine. The client then asks every node for the ceiling it records, and starts the
// quarantine only when that is safe: a quarantine lasts the ceiling it is started with, and one
// started with a ceiling shorter than the one other clients' leases were granted under would end
// while their locks still stand. Found unkilled by mutation testing (docs/mutation.md): the
// existing tests met a node without a sentinel only when another voter had already confirmed.
//
// How the client is kept from any confirmation during its round: nodes 2, 3 and 5 are paused
// (SIGSTOP: they answer nothing until resumed) and node 4 is out of memory (maxmemory 1 byte,
// noeviction), so its grant, a write, fails, while a plain read (the ceiling read) still answers.

const env = redlockEnv();
const MAX_TTL = 3_000;
const NODE_TIMEOUT = 500;

function freshClient(prefix: string, maxTtlMs = MAX_TTL): Redlock {
  const r = new Redlock(env.cluster.urls, { keyPrefix: prefix, maxTtlMs, retryCount: 0, nodeTimeoutMs: NODE_TIMEOUT });
  env.redlocks.push(r);
  return r;
}

/**
 * Counts the ceiling reads (HMGET <epoch> createdAt maxTtlMs, sent by a client, not by a script)
 * node `index` serves while `body` runs, through MONITOR on a connection of its own.
 */
async function ceilingReads(index: number, prefix: string, body: () => Promise<void>): Promise<number> {
  const monitor = await MonitorFeed.open(env.cluster.supervisor.directUrls()[index]!);
  try {
    await body();
    // A read whose reply ended `body` may not have reached the feed yet: drain it.
    await monitor.drain((marker) => env.direct[index]!.echo(marker));
  } finally {
    monitor.close();
  }
  const read = `HMGET ${epochKey(prefix)} createdAt maxTtlMs`;
  return monitor.commands.filter((c) => c.source !== 'lua' && c.args.join(' ') === read).length;
}

async function markAllClean(prefix: string, maxTtlMs = MAX_TTL): Promise<void> {
  for (const d of env.direct) await markNodeClean(d, { keyPrefix: prefix, maxTtlMs });
}

/** Nodes 2, 3, 5 paused and node 4 out of memory (noeviction) for the duration of `body`, whatever happens. */
async function withoutConfirmations(body: () => Promise<void>): Promise<void> {
  const paused: number[] = [];
  const saved = (await env.direct[3]!.config('GET', 'maxmemory', 'maxmemory-policy')) as string[];
  try {
    for (const id of [2, 3, 5]) {
      paused.push(id);
      await env.cluster.supervisor.pause(id);
    }
    await env.direct[3]!.config('SET', 'maxmemory-policy', 'noeviction');
    await env.direct[3]!.config('SET', 'maxmemory', '1');
    await body();
  } finally {
    for (let i = 0; i + 1 < saved.length; i += 2) await env.direct[3]!.config('SET', saved[i]!, saved[i + 1]!);
    for (const id of paused) await env.cluster.supervisor.resume(id);
  }
}

/**
 * A lease short enough that a round's deadline (its validity horizon) is below the node timeout:
 * the paused nodes are never marked stalled (node.ts markStalled), so every ceiling read is sent
 * to them too and must give up on them by itself, after the node timeout.
 */
const SHORT_LEASE = 300;

/** One acquire that fails (no quorum answers), then the node's quarantine start, if any, has finished. */
async function failedAttempt(r: Redlock, resource: string): Promise<void> {
  await expect(r.acquire(resource, SHORT_LEASE)).rejects.toThrow();
  await waitFor(() => !nodeOf(r, 0).checks.starting, 5_000, 'the quarantine start to finish');
}

describe('starting a quarantine a fresh client could not start in its check', () => {
  it('one start at a time per node; too little evidence starts none and does not block a later start; a node recording this ceiling is enough', async () => {
    const prefix = uniquePrefix('qstart');
    await markAllClean(prefix);
    await env.direct[0]!.del(epochKey(prefix)); // node 1 lost its data
    await env.direct[3]!.del(epochKey(prefix)); // and so did node 4, for now
    const r = freshClient(prefix);
    const quarantines: QuarantineEvent[] = [];
    r.on('quarantine', (e) => quarantines.push(e));
    // Nodes 2, 3 and 5 stay paused throughout: they never confirm anything to this client.
    await withoutConfirmations(async () => {
      // First: nodes 1 and 4 answer the ceiling read, both without a sentinel: 2 of the 3 needed to
      // start with this client's ceiling, and no node records a ceiling. Nothing is started.
      await failedAttempt(r, 'a');
      expect(await readEpoch(env.direct[0]!, prefix)).toBeNull();
      expect(quarantines).toEqual([]);

      // Then node 4 records this client's ceiling again (its writes allowed for that moment).
      await env.direct[3]!.config('SET', 'maxmemory', '0');
      await markNodeClean(env.direct[3]!, { keyPrefix: prefix, maxTtlMs: MAX_TTL });
      await env.direct[3]!.config('SET', 'maxmemory', '1');
      // Two attempts at once both meet node 1 without a sentinel; one start reads the ceilings, the
      // other leaves it to that one.
      const reads = await ceilingReads(3, prefix, async () => {
        const attempts = [r.acquire('b', SHORT_LEASE), r.acquire('c', SHORT_LEASE)];
        for (const a of attempts) await expect(a).rejects.toThrow();
        await waitFor(() => quarantines.some((q) => q.node === 1 && q.discovered), 5_000, 'the quarantine of node 1');
        await waitFor(() => !nodeOf(r, 0).checks.starting, 5_000, 'the start to finish');
      });
      expect(reads).toBe(1);
    });
    const sentinel = await readEpoch(env.direct[0]!, prefix);
    expect(sentinel?.maxTtlMs).toBe(MAX_TTL);
    expect(sentinel!.quarantineUntil).toBeGreaterThan(Date.now());
  });

  it('a ceiling recorded elsewhere that is not this client’s: no quarantine with its own, and it does not ask again', async () => {
    const prefix = uniquePrefix('qconflict');
    await markAllClean(prefix);
    await env.direct[0]!.del(epochKey(prefix));
    // This client's ceiling is shorter than the cluster's: a quarantine lasting it could end while
    // leases granted under the cluster's ceiling still stand.
    const r = freshClient(prefix, 1_000);
    const reads = await ceilingReads(3, prefix, () =>
      withoutConfirmations(async () => {
        await failedAttempt(r, 'a');
        await failedAttempt(r, 'b');
      }),
    );
    expect(await readEpoch(env.direct[0]!, prefix)).toBeNull();
    // One read at most: node 4's own check may report the other ceiling first (then none).
    expect(reads).toBeLessThanOrEqual(1);
  });

  it('a quorum of nodes answering without a sentinel and none recording a ceiling: the quarantine starts with this client’s', async () => {
    const prefix = uniquePrefix('qquorum');
    await markAllClean(prefix);
    for (const i of [0, 1, 2]) await env.direct[i]!.del(epochKey(prefix)); // nodes 1–3 lost their data
    const r = freshClient(prefix);
    const quarantines: QuarantineEvent[] = [];
    r.on('quarantine', (e) => quarantines.push(e));
    // Nodes 4 and 5 (the two that remember) answer nothing: exactly a quorum (3) answers, all without.
    for (const id of [4, 5]) await env.cluster.supervisor.pause(id);
    try {
      await expect(r.acquire('a', 1_000)).rejects.toThrow();
      await waitFor(() => [1, 2, 3].every((n) => quarantines.some((q) => q.node === n && q.discovered)), 5_000, 'nodes 1–3 quarantined');
    } finally {
      for (const id of [4, 5]) await env.cluster.supervisor.resume(id);
    }
    for (const i of [0, 1, 2]) expect((await readEpoch(env.direct[i]!, prefix))?.maxTtlMs).toBe(MAX_TTL);
  });

  it('nodes that stop answering after the client connected: the ceiling read gives up on them after the node timeout, and the quarantine starts', async () => {
    const prefix = uniquePrefix('qconnected');
    await markAllClean(prefix);
    for (const i of [0, 1, 2]) await env.direct[i]!.del(epochKey(prefix)); // nodes 1–3 lost their data
    const r = freshClient(prefix);
    const quarantines: QuarantineEvent[] = [];
    r.on('quarantine', (e) => quarantines.push(e));
    // Connected to every node first: a node paused now keeps its socket open and silent, so no
    // connect timeout fails the read sent to it (as it does for a node paused before the client
    // connected, the case above); only the read's own node timeout gives up on it. Without that
    // timeout the start would wait for nodes 4 and 5 until they answer again, and nodes 1–3 stay
    // out of every quorum meanwhile (on the safe side, but for as long as any node hangs).
    await r.connect();
    for (const id of [4, 5]) await env.cluster.supervisor.pause(id);
    try {
      await expect(r.acquire('a', 1_000)).rejects.toThrow();
      await waitFor(() => [1, 2, 3].every((n) => quarantines.some((q) => q.node === n && q.discovered)), 5_000, 'nodes 1–3 quarantined');
    } finally {
      for (const id of [4, 5]) await env.cluster.supervisor.resume(id);
    }
    for (const i of [0, 1, 2]) expect((await readEpoch(env.direct[i]!, prefix))?.maxTtlMs).toBe(MAX_TTL);
  });

  it('a start that fails on the node (its write refused) is reported as a node error, not dropped', async () => {
    const prefix = uniquePrefix('qfail');
    await markAllClean(prefix);
    await env.direct[0]!.del(epochKey(prefix));
    const r = freshClient(prefix);
    const errors: NodeErrorEvent[] = [];
    r.on('node-error', (e) => errors.push(e));
    await withoutConfirmations(async () => {
      await expect(r.acquire('a', 1_000)).rejects.toThrow();
      // The start now reads the ceilings (it waits up to the node timeout for the paused nodes);
      // node 1 runs out of memory before the start's write reaches it.
      await env.direct[0]!.config('SET', 'maxmemory', '1');
      try {
        await waitFor(() => !nodeOf(r, 0).checks.starting, 5_000, 'the start to finish');
      } finally {
        await env.direct[0]!.config('SET', 'maxmemory', '0');
      }
    });
    expect(errors.filter((e) => e.node === 1).map((e) => e.error.message)).toEqual([expect.stringMatching(/OOM/)]);
    expect(await readEpoch(env.direct[0]!, prefix)).toBeNull();
  });

  it('a node whose check cannot report its other ceiling still stops the start through the read, once, even with another node agreeing', async () => {
    const prefix = uniquePrefix('qconflict-read');
    await markAllClean(prefix); // the cluster's ceiling: MAX_TTL
    await markNodeClean(env.direct[4]!, { keyPrefix: prefix, maxTtlMs: 1_000 }); // node 5 records this client's
    await env.direct[0]!.del(epochKey(prefix));
    const r = freshClient(prefix, 1_000);
    // Nodes 4 and 5 refuse scripts (ACL): their checks fail, so neither reports its ceiling to this
    // client's cluster view; their plain reads (the ceiling read) still answer. Nodes 2 and 3 paused.
    const noScripts = ['-eval', '-evalsha', '-eval_ro', '-evalsha_ro'];
    const reads = await ceilingReads(3, prefix, async () => {
      try {
        for (const i of [3, 4]) await env.direct[i]!.call('ACL', 'SETUSER', 'default', ...noScripts);
        for (const id of [2, 3]) await env.cluster.supervisor.pause(id);
        await failedAttempt(r, 'a');
        await failedAttempt(r, 'b');
      } finally {
        for (const id of [2, 3]) await env.cluster.supervisor.resume(id);
        for (const i of [3, 4]) await env.direct[i]!.call('ACL', 'SETUSER', 'default', '+@all');
      }
    });
    // Node 4's other ceiling stops it although node 5 agrees: a quarantine with this client's
    // shorter ceiling would end while leases granted under the cluster's still stand.
    expect(await readEpoch(env.direct[0]!, prefix)).toBeNull();
    // And the conflict is remembered: the second attempt does not read again.
    expect(reads).toBe(1);
  });
});
