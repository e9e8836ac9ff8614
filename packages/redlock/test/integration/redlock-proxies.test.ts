import { afterEach, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import {
  Lock,
  LockContendedError,
  readEpoch,
  Redlock,
  RedlockError,
  tokenOf,
  type NodeErrorEvent,
  type RedlockSettings,
  type Vote,
} from '@redlock-console/redlock';
import { uniquePrefix, waitFor } from '@/test/support/cluster';
import { NO_PERSISTENCE, startRedisNode, startRedisNodes, type RedisNode } from '@/test/support/redis-nodes';
import { startTwemproxy, type Twemproxy } from '@/test/support/twemproxy';
import { waitersAsleep } from '@/test/support/waiters';
import { NodeConnection } from '../../src/connection';
import type { LockNode } from '../../src/node';
import { parseNodeUrl } from '../../src/node-url';
import { TIME_SCRIPT } from '../../src/scripts';
import type { ReleaseWaiters } from '../../src/waiters';

// A node reached through twemproxy (Debian's `nutcracker`, a real process here). twemproxy
// closes the client's socket, without a reply, on every command it does not support: among them
// SCRIPT, MULTI/EXEC, WATCH, TIME, INFO, SELECT, CLIENT, HELLO, PUBLISH/SUBSCRIBE, QUIT, PEXPIRE … GT,
// PING with an argument and EVAL without a key. It serves SET NX GET PX, HMGET/HSET/GET/DEL/EXISTS
// and EVAL/EVALSHA with a key (NOSCRIPT is an error reply), TIME, INFO and PUBLISH inside Lua; it
// answers PING itself; and it keeps a client's socket open across a restart of its upstream. The
// README promises a slower fallback for a proxy that refuses SCRIPT; the product choice tested here
// is that the proxied node votes (not a typed refusal at connect).
//
// The core finds the proxy by its handshake's last step (SCRIPT EXISTS of a SHA no script has: Redis
// answers [0], twemproxy closes the socket), or is told by the URL's `?proxy=twemproxy`; such a node
// is sent only key commands and keyed scripts (src/node.ts proxySafe).
//
// Five redis-servers; node 3 (nodes[2]) is reached only through twemproxy, the others directly. A
// holds the lock on exactly nodes 1–3 (nodes 4 and 5 refuse it: a foreign key there), so A is
// granted only if the proxied node votes for, and a second client B is refused only if the proxied
// node holds A's key (nodes 4 and 5, freed, vote for B).

/** The cluster's lease ceiling in these tests. */
const MAX_TTL = 6_000;
/** How long a node still connecting (or reconnecting) may vote `error` before the test gives up on it. */
const ANSWER_WITHIN_MS = 5_000;
const PROXIED = 2;

let nodes: RedisNode[] = [];
let proxy: Twemproxy | null = null;
const redlocks: Redlock[] = [];

afterEach(async () => {
  await Promise.all(redlocks.splice(0).map((r) => r.quit()));
  await proxy?.stop();
  proxy = null;
  await Promise.all(nodes.map((n) => n.stop()));
  nodes = [];
});

/** Five redis-servers, node 3 behind nutcracker; the URLs a Redlock is given. */
async function startCluster(): Promise<string[]> {
  nodes = await startRedisNodes(() => NO_PERSISTENCE);
  proxy = await startTwemproxy(nodes[PROXIED]!.port);
  return nodes.map((n, i) => (i === PROXIED ? proxy!.url : n.url));
}

interface Client {
  readonly redlock: Redlock;
  /** The node-error events of the proxied node so far (their messages). */
  readonly proxiedErrors: string[];
}

function nodesOf(r: Redlock): LockNode[] {
  return (r as unknown as { nodes: LockNode[] }).nodes;
}

/** A redis-server's calls per command so far (INFO commandstats; commands run inside Lua count too). */
async function commandCalls(client: Redis): Promise<Map<string, number>> {
  const calls = new Map<string, number>();
  for (const line of (await client.info('commandstats')).split('\r\n')) {
    const m = /^cmdstat_([^:]+):calls=(\d+)/.exec(line);
    if (m) calls.set(m[1]!, Number(m[2]));
  }
  return calls;
}

/** What nutcracker logged as unsupported so far, one entry per occurrence. */
function unsupportedLogged(): string[] {
  return proxy?.log().match(/parsed unsupported command '[^']*'/g) ?? [];
}

function client(prefix: string, targets: string[], settings: Partial<RedlockSettings> = {}): Client {
  const redlock = new Redlock(targets, { keyPrefix: prefix, maxTtlMs: MAX_TTL, retryCount: 0, nodeTimeoutMs: 2_000, ...settings });
  const proxiedErrors: string[] = [];
  redlock.on('node-error', (e: NodeErrorEvent) => {
    if (e.node === PROXIED + 1 && proxiedErrors.length < 50) proxiedErrors.push(e.error.message);
  });
  redlocks.push(redlock);
  return { redlock, proxiedErrors };
}

/** Everything a failure message needs: the votes, the proxied node's errors, what nutcracker logged. */
function diagnose(c: Client, votes: readonly Vote[] | undefined, outcome: unknown): string {
  const unsupported = [...new Set(proxy?.log().match(/parsed unsupported command '[^']*'/g) ?? [])];
  return [
    `outcome: ${outcome instanceof Error ? `${outcome.name}: ${outcome.message}` : outcome instanceof Lock ? 'Lock' : String(outcome)}`,
    `votes: ${JSON.stringify(votes ?? null)}`,
    `node 3 errors: ${JSON.stringify([...new Set(c.proxiedErrors)])}`,
    `nutcracker log: ${JSON.stringify(unsupported)}`,
  ].join('\n');
}

/**
 * c's acquire, again while the proxied node votes `error` (it may still be connecting) or `pending`
 * (the round was decided without it), for at most ANSWER_WITHIN_MS; the last outcome.
 */
async function acquireOnceNode3Answers(c: Client, resource: string, ttl: number): Promise<Lock | Error> {
  const deadline = Date.now() + ANSWER_WITHIN_MS;
  for (;;) {
    const outcome = await c.redlock.acquire(resource, ttl).catch((e: Error) => e);
    const vote = outcome instanceof Lock || outcome instanceof RedlockError ? outcome.votes[PROXIED] : undefined;
    if ((vote?.reason !== 'error' && vote?.reason !== 'pending') || Date.now() > deadline) return outcome;
    if (outcome instanceof Lock) await outcome.release();
    // poll: until the proxied node answers
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** markNodesClean reached every node, the proxied one included (its sentinel records the ceiling). */
async function markClean(c: Client, prefix: string): Promise<void> {
  await c.redlock.markNodesClean();
  const epochs = await Promise.all(nodes.map((n) => readEpoch(n.client, prefix)));
  const unmarked = epochs.flatMap((e, i) => (e?.maxTtlMs === MAX_TTL ? [] : [i + 1]));
  expect.soft(unmarked, `markNodesClean left nodes ${unmarked.join(', ')} without a sentinel\n${diagnose(c, undefined, null)}`).toEqual([]);
}

/**
 * `c` holds `resource` on exactly nodes 1–3: nodes 4 and 5 refuse it (a foreign key), so the grant
 * needs the proxied node's vote; then the foreign keys go (after every node answered c).
 */
async function holdOn123(c: Client, resource: string): Promise<Lock> {
  const key = c.redlock.lockKey(resource);
  for (const i of [3, 4]) await nodes[i]!.client.set(key, 'foreign-token', 'PX', 60_000);
  const outcome = await acquireOnceNode3Answers(c, resource, MAX_TTL);
  const votes = outcome instanceof Lock || outcome instanceof RedlockError ? outcome.votes : undefined;
  expect(votes?.[PROXIED]?.vote, `the proxied node (3) must vote for this acquire\n${diagnose(c, votes, outcome)}`).toBe('for');
  expect(outcome, diagnose(c, votes, outcome)).toBeInstanceOf(Lock);
  const lock = outcome as Lock;
  // Every node answered c (a SET still in flight could land after the foreign key goes).
  await (
    await c.redlock.releaseToken('settled-barrier', lock.token)
  ).settled;
  for (const i of [3, 4]) await nodes[i]!.client.del(key);
  const holders = (await Promise.all(nodes.map((n) => n.client.get(key)))).map((v) => v && tokenOf(v));
  expect(holders).toEqual([lock.token, lock.token, lock.token, null, null]);
  return lock;
}

/** B was refused while A holds, the proxied node voting `reason` against it. */
function expectRefused(b: Client, outcome: Lock | Error, lockA: Lock, reason: RegExp): void {
  if (outcome instanceof Lock) {
    throw new Error(
      `two holders: B was granted (fence ${outcome.fence}) while A holds (fence ${lockA.fence})\n${diagnose(b, outcome.votes, outcome)}`,
    );
  }
  const votes = outcome instanceof RedlockError ? outcome.votes : undefined;
  expect(votes?.[PROXIED]?.reason, `the proxied node (3) must refuse B\n${diagnose(b, votes, outcome)}`).toMatch(reason);
  expect(votes![PROXIED]!.vote).toBe('against');
  expect(outcome).toBeInstanceOf(LockContendedError);
  // Meaningful only while A still holds.
  expect(lockA.validityMs).toBeGreaterThan(0);
}

describe('a node behind twemproxy (nutcracker) votes', () => {
  it('A is granted with the proxied node voting for, B is refused by it while A holds, the release deletes there, then B is granted', async () => {
    const targets = await startCluster();
    const prefix = uniquePrefix('twemproxy');
    const a = client(prefix, targets);
    await markClean(a, prefix);
    const lockA = await holdOn123(a, 'res');

    const b = client(prefix, targets);
    expectRefused(b, await acquireOnceNode3Answers(b, 'res', 1_000), lockA, /^contended$/);

    const released = await (await lockA.release()).settled;
    expect(released.votes[PROXIED], diagnose(a, released.votes, 'release')).toMatchObject({ vote: 'for', reason: 'ok' });
    expect(await nodes[PROXIED]!.client.get(a.redlock.lockKey('res'))).toBeNull();

    const lockB = await acquireOnceNode3Answers(b, 'res', 1_000);
    const votesB = lockB instanceof Lock || lockB instanceof RedlockError ? lockB.votes : undefined;
    expect(lockB, diagnose(b, votesB, lockB)).toBeInstanceOf(Lock);
    expect(votesB![PROXIED]!.vote).toBe('for');
    expect((lockB as Lock).fence!).toBeGreaterThan(lockA.fence!);
    await (lockB as Lock).release();
  });

  it('a restart of the upstream behind the proxy (which keeps the client socket open) is found: B, connected before it, is refused while A holds', async () => {
    const targets = await startCluster();
    const prefix = uniquePrefix('twemproxy-restart');
    const a = client(prefix, targets);
    await markClean(a, prefix);
    // B has checked the proxied node in its current process (its vote there counted) before the restart.
    const b = client(prefix, targets);
    await (await holdOn123(b, 'other')).release();

    const lockA = await holdOn123(a, 'res');
    const errorsBefore = b.proxiedErrors.length;
    // The upstream restarts without persistence: A's key and the sentinel are gone; nutcracker keeps B's socket.
    await nodes[PROXIED]!.crash();
    await nodes[PROXIED]!.start();
    await waitFor(async () => (await nodes[PROXIED]!.client.ping().catch(() => null)) === 'PONG', 5_000, 'the direct client to node 3');
    expect(await nodes[PROXIED]!.client.get(a.redlock.lockKey('res'))).toBeNull();

    expectRefused(b, await acquireOnceNode3Answers(b, 'res', 1_000), lockA, /^quarantined$/);
    // The restart was found by the probe, not by a dropped connection (nutcracker kept B's socket).
    expect(b.proxiedErrors.slice(errorsBefore)).toEqual([]);
    expect(await readEpoch(nodes[PROXIED]!.client, prefix)).toMatchObject({ cause: 'data-loss', maxTtlMs: MAX_TTL });
  });

  it('the handshake tells the proxied node from the direct ones: the direct redis-servers keep the WATCHed fast transaction, the proxied one is sent nothing twemproxy refuses', async () => {
    const targets = await startCluster();
    const prefix = uniquePrefix('twemproxy-detect');
    // A long check interval: after each node's first check, every probe is a fast one.
    const a = client(prefix, targets, { nodeCheckIntervalMs: 60_000 });
    await markClean(a, prefix);
    const grantAndRelease = async (resource: string) => {
      const lock = await acquireOnceNode3Answers(a, resource, MAX_TTL);
      expect(lock, diagnose(a, lock instanceof Lock ? lock.votes : undefined, lock)).toBeInstanceOf(Lock);
      expect((lock as Lock).votes[PROXIED]!.vote).toBe('for');
      // Settled: every node has answered everything of this acquire (its probe came before the release).
      await (
        await (lock as Lock).release()
      ).settled;
    };
    // The first grant on each node is its check; the ones measured are fast probes.
    await grantAndRelease('warm-up');
    const before = await Promise.all(nodes.map((n) => commandCalls(n.client)));
    for (let i = 0; i < 4; i++) await grantAndRelease(`res-${i}`);
    const after = await Promise.all(nodes.map((n) => commandCalls(n.client)));
    const delta = (i: number, command: string) => (after[i]!.get(command) ?? 0) - (before[i]!.get(command) ?? 0);
    nodesOf(a.redlock).forEach((node, i) => {
      if (i === PROXIED) {
        expect({ proxySafe: node.proxySafe, canWatch: node.canWatch, watching: node.watching, watch: node.watch }).toEqual({
          proxySafe: true,
          canWatch: false,
          watching: false,
          watch: 'none',
        });
        // Through the proxy: the probe script's own fast read, no transaction, no WATCH.
        for (const command of ['multi', 'exec', 'watch', 'unwatch', 'script|exists', 'script|load'])
          expect(delta(i, command), command).toBe(0);
        expect(delta(i, 'evalsha')).toBeGreaterThanOrEqual(4);
      } else {
        // A direct redis-server answered SCRIPT EXISTS with [0]: not proxy-safe, the WATCHed fast transaction.
        expect({ proxySafe: node.proxySafe, canWatch: node.canWatch, watching: node.watching, watch: node.watch }).toEqual({
          proxySafe: false,
          canWatch: true,
          watching: true,
          watch: 'armed',
        });
        expect(delta(i, 'exec'), `node ${i + 1}`).toBeGreaterThanOrEqual(4);
        expect(delta(i, 'watch'), `node ${i + 1}`).toBe(delta(i, 'exec'));
      }
    });
    // The Lua TIME a proxy-safe node's grant reads first has TIME's shape, [seconds, microseconds], through the proxy too.
    const proxied = new NodeConnection(parseNodeUrl(`${proxy!.url}?proxy=twemproxy`));
    try {
      await new Promise((resolve) => proxied.once('ready', resolve));
      const [plain, viaProxy] = await Promise.all([
        nodes[PROXIED]!.client.time(),
        proxied.call('EVAL', TIME_SCRIPT.source, 1, `${prefix}epoch`),
      ]);
      expect(viaProxy).toEqual([expect.stringMatching(/^\d+$/), expect.stringMatching(/^\d+$/)]);
      expect(Math.abs(Number((viaProxy as string[])[0]) - Number(plain[0]))).toBeLessThanOrEqual(1);
    } finally {
      proxied.disconnect();
    }
    // The detection cost the proxied node one closed socket, once, and no node-error event.
    expect(unsupportedLogged()).toEqual(["parsed unsupported command 'SCRIPT'"]);
    expect(a.proxiedErrors).toEqual([]);
    // The last step of the handshake, on the direct server: ready, and not proxy-safe.
    const direct = new NodeConnection(parseNodeUrl(nodes[0]!.url));
    try {
      await new Promise((resolve) => direct.once('ready', resolve));
      expect(direct.proxySafe).toBe(false);
    } finally {
      direct.disconnect();
    }
  });

  it('?proxy=twemproxy: proxy-safe from the start, nothing twemproxy refuses is ever sent (not even to find out), and a waiter is woken by the direct nodes', async () => {
    const targets = await startCluster();
    const told = targets.map((url, i) => (i === PROXIED ? `${url}?proxy=twemproxy` : url));
    const prefix = uniquePrefix('twemproxy-url');
    const a = client(prefix, told);
    expect(nodesOf(a.redlock)[PROXIED]!.proxySafe).toBe(true);
    await markClean(a, prefix);
    const lockA = await holdOn123(a, 'res');

    // B waits for A's lock with a retry delay far longer than the test: only a release message wakes it.
    const b = client(prefix, told, { retryCount: 1, retryDelayMs: 20_000, retryJitterMs: 0 });
    const started = Date.now();
    const waiting = b.redlock.acquire('res', 1_000).catch((e: Error) => e);
    const waiters = (b.redlock as unknown as { waiters: ReleaseWaiters }).waiters;
    await waitFor(() => waiters.size === 1, 5_000, "B's waiter");
    // No subscriber on the proxied node (twemproxy closes on INFO and SUBSCRIBE); the four direct ones.
    await waitFor(() => waiters.connections === 4, 5_000, "B's four subscribers");
    await waitersAsleep(b.redlock);
    await (
      await lockA.release()
    ).settled;
    const lockB = await waiting;
    expect(lockB, diagnose(b, lockB instanceof Lock || lockB instanceof RedlockError ? lockB.votes : undefined, lockB)).toBeInstanceOf(
      Lock,
    );
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(waiters.connections).toBe(4);
    await (
      await (lockB as Lock).release()
    ).settled;

    await Promise.all(redlocks.splice(0).map((r) => r.quit()));
    expect(unsupportedLogged()).toEqual([]);
    expect([...a.proxiedErrors, ...b.proxiedErrors]).toEqual([]);
  });

  it('a node that answers SCRIPT EXISTS with an error (an ACL user without SCRIPT; Envoy-style proxies) is proxy-safe too, without a reconnection', async () => {
    const node = await startRedisNode(NO_PERSISTENCE);
    nodes = [node];
    await node.client.call('ACL', 'SETUSER', 'noscript', 'on', '>pw', '~*', '&*', '+@all', '-script');
    const refused = new NodeConnection(parseNodeUrl(`redis://noscript:pw@127.0.0.1:${node.port}`));
    const errors: Error[] = [];
    refused.on('error', (e: Error) => errors.push(e));
    let readies = 0;
    refused.on('ready', () => readies++);
    try {
      await waitFor(() => readies > 0, 5_000, 'ready');
      expect(refused.proxySafe).toBe(true);
      expect(await refused.call('PING')).toBe('PONG');
      expect({ readies, errors: errors.map((e) => e.message) }).toEqual({ readies: 1, errors: [] });
    } finally {
      refused.disconnect();
    }
  });
});
