import { describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import {
  InvalidArgumentError,
  Lock,
  LockContendedError,
  QuorumUnavailableError,
  Redlock,
  RedlockError,
  tokenOf,
  type RedlockSettings,
} from '@redlock-console/redlock';
import { FaultProxy } from '@/lib/faults';
import { uniquePrefix } from '@/test/support/cluster';
import { NO_PERSISTENCE, startRedisNode } from '@/test/support/redis-nodes';
import { redlockEnv } from '@/test/support/redlock-env';
import { waitersAsleep } from '@/test/support/waiters';

// What a user of a lock library relies on beyond mutual exclusion: an acquire a quorum
// can grant is granted, a rejected acquire leaves nothing behind, and the error says whether the
// lock is held or the cluster is unhealthy.

const env = redlockEnv();
const { redlocks, unhandled } = env;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function redlock(name: string, settings: Partial<RedlockSettings> = {}): Promise<Redlock> {
  const r = new Redlock(env.cluster.urls, { keyPrefix: uniquePrefix(name), retryCount: 0, ...settings });
  redlocks.push(r);
  await r.markNodesClean();
  await r.connect();
  return r;
}

describe("the lock core's contract", () => {
  it('one of five nodes pausing under 32 concurrent fenced loops fails no acquire (the fence round reaches late voters)', async () => {
    // nodeTimeoutMs well above a loaded machine's pauses: what fails here must be the protocol.
    const r = await redlock('pause-one', { nodeTimeoutMs: 1_000 });
    let stop = false;
    let granted = 0;
    const failures: string[] = [];
    const loop = async (k: number) => {
      for (let i = 0; !stop; i++) {
        try {
          const lock = await r.acquire(`loop-${k}-${i % 3}`, 2_000);
          granted++;
          await lock.release();
        } catch (err) {
          failures.push(`${(err as Error).name}: ${(err as Error).message}`);
        }
      }
    };
    const loops = Array.from({ length: 32 }, (_, k) => loop(k));
    // SIGSTOP one node at a time for 0.3 s, four times in about 3.5 s: four nodes always answer.
    for (let n = 0; n < 4; n++) {
      // pace: a pause every ~0.8 s
      await sleep(500);
      const id = 1 + (n % 5);
      await env.cluster.supervisor.pause(id);
      // pace: paused 0.3 s
      await sleep(300);
      await env.cluster.supervisor.resume(id);
    }
    // pace: the loops run a while after the last resume
    await sleep(300);
    stop = true;
    await Promise.all(loops);
    expect(failures).toEqual([]);
    expect(granted).toBeGreaterThan(100);
  });

  it('when acquire() rejects, nothing of the attempt is left on any node that answered', async () => {
    // Node timeouts of 1 s: every node must answer here, and a loaded machine's stall is not a timeout vote.
    const a = await redlock('leftovers', { nodeTimeoutMs: 1_000 });
    const b = new Redlock(env.cluster.urls, { keyPrefix: a.settings.keyPrefix, retryCount: 0, nodeTimeoutMs: 1_000 });
    redlocks.push(b);
    const key = a.lockKey('res');
    // A holds nodes 1–3 (a foreign key keeps it off 4 and 5, then goes): B gets 4 and 5, and is refused.
    for (const i of [3, 4]) await env.direct[i]!.set(key, 'foreign', 'PX', 10_000);
    const lockA = await a.acquire('res', 5_000);
    // Nodes are numbered from 1 in the order given (votes.ts): node n's vote is votes[n - 1].
    expect(lockA.votes.map((v) => v.node)).toEqual([1, 2, 3, 4, 5]);
    for (const i of [3, 4]) await env.direct[i]!.del(key);
    for (let round = 0; round < 5; round++) {
      const refused = await b.acquire('res', 5_000).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(LockContendedError);
      expect((refused as LockContendedError).votes.map((v) => v.node)).toEqual([1, 2, 3, 4, 5]);
      // Every node answered the grant and the cleanup: nothing may remain anywhere.
      expect((refused as LockContendedError).cleanupPending).toEqual([]);
      // Read at once, in the same tick as the rejection: B's keys on 4 and 5 are already gone.
      const values = await Promise.all(env.direct.map((c) => c.get(key)));
      expect(values.map((v) => v && tokenOf(v))).toEqual([lockA.token, lockA.token, lockA.token, null, null]);
    }
    await lockA.release();
  });

  it('a rejected acquire names the nodes where its keys may remain (a node that did not answer), and nothing is left on the others', async () => {
    // Node timeouts of 1 s: only the paused node may fail to answer (at 300 ms a loaded machine's
    // cleanups on all five read as unanswered).
    const a = await redlock('leftovers-paused', { nodeTimeoutMs: 1_000 });
    const b = new Redlock(env.cluster.urls, {
      keyPrefix: a.settings.keyPrefix,
      retryCount: 2,
      retryDelayMs: 5,
      retryJitterMs: 0,
      nodeTimeoutMs: 1_000,
    });
    redlocks.push(b);
    await b.connect();
    const key = a.lockKey('res');
    for (const i of [3, 4]) await env.direct[i]!.set(key, 'foreign', 'PX', 10_000);
    const lockA = await a.acquire('res', 5_000);
    for (const i of [3, 4]) await env.direct[i]!.del(key);
    // Node 5 stops answering: B's grant and cleanup there stay queued behind the pause.
    await env.cluster.supervisor.pause(5);
    try {
      const refused = await b.acquire('res', 5_000, { metadata: { attempt: 'b-1' } }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(LockContendedError);
      expect((refused as LockContendedError).cleanupPending).toEqual([5]); // node numbers, as in votes
      const values = await Promise.all(env.direct.slice(0, 4).map((c) => c.get(key)));
      expect(values.map((v) => v && tokenOf(v))).toEqual([lockA.token, lockA.token, lockA.token, null]);
    } finally {
      await env.cluster.supervisor.resume(5);
    }
    // Once node 5 runs its queue, the compare-and-deletes that followed each grant remove B's keys.
    // poll: until node 5's key is gone
    for (let i = 0; i < 50 && (await env.direct[4]!.get(key)) !== null; i++) await sleep(20);
    expect(await env.direct[4]!.get(key)).toBeNull();
    await lockA.release();
  });

  it('a rejected multi-resource acquire names a node whose grant went again as EVAL after NOSCRIPT (it may run after the cleanup)', async () => {
    // A node timeout of 1 s: the refusal must come from the votes, not a loaded machine's timeouts.
    const a = await redlock('leftovers-noscript', { nodeTimeoutMs: 1_000 });
    const key = a.lockKey('x');
    // Nodes 1–3 hold x for someone else; node 5 lost its script cache.
    for (const i of [0, 1, 2]) await env.direct[i]!.set(key, 'foreign', 'PX', 10_000);
    await env.direct[4]!.script('FLUSH');
    const refused = await a.acquire(['x', 'y'], 2_000, { fenced: false }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(LockContendedError);
    expect((refused as LockContendedError).cleanupPending).toContain(5);
    // Node 4 answered its grant and the cleanup on one connection: nothing of the attempt there.
    expect((refused as LockContendedError).cleanupPending).not.toContain(4);
    expect(await env.direct[3]!.exists(key, a.lockKey('y'))).toBe(0);
    for (const i of [0, 1, 2]) await env.direct[i]!.del(key);
  });

  it('held by another client on two nodes with a third quarantined: LockContendedError (wait), not QuorumUnavailableError (outage)', async () => {
    const a = await redlock('contended-quarantined');
    const b = new Redlock(env.cluster.urls, { keyPrefix: a.settings.keyPrefix, retryCount: 0 });
    redlocks.push(b);
    const key = a.lockKey('res');
    for (const i of [2, 3, 4]) await env.direct[i]!.set(key, 'foreign', 'PX', 10_000);
    const lockA = await a.acquire('res', 5_000).catch((e: unknown) => e);
    expect(lockA).toBeInstanceOf(LockContendedError);
    // The other holder: nodes 1 and 2. Node 3 lost its data (quarantined); 4 and 5 are free.
    for (const i of [0, 1]) await env.direct[i]!.set(key, 'holder {"owner":"someone"}', 'PX', 10_000);
    for (const i of [2, 3, 4]) await env.direct[i]!.del(key);
    await env.direct[2]!.del(`${a.settings.keyPrefix}epoch`);
    const refused = await b.acquire('res', 1_000).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(LockContendedError);
    expect((refused as LockContendedError).holder).toEqual({ owner: 'someone' });
    const reasons = (refused as LockContendedError).votes.map((v) => v.reason);
    expect(reasons.slice(0, 3)).toEqual(['contended', 'contended', 'quarantined']);
    for (const reason of reasons.slice(3)) expect(reason).toMatch(/^(ok|pending)$/);
    // With three nodes unreachable the cluster itself cannot grant: that is an outage.
    for (const id of [3, 4, 5]) await env.cluster.supervisor.partition(id);
    try {
      const outage = await b.acquire('res', 1_000).catch((e: unknown) => e);
      expect(outage).toBeInstanceOf(QuorumUnavailableError);
    } finally {
      for (const id of [3, 4, 5]) await env.cluster.supervisor.heal(id);
    }
  });

  it('a majority held by keys that are not going away (a split between two foreign tokens): a bounded number of attempts, not a storm', async () => {
    const r = await redlock('stale-majority', { retryCount: 5, retryDelayMs: 100, retryJitterMs: 0 });
    const key = r.lockKey('res');
    // Leftovers of two other clients: a split vote, which the core answers with short naps.
    for (const [i, token] of [
      [0, 'stale-a'],
      [1, 'stale-a'],
      [2, 'stale-b'],
    ] as const)
      await env.direct[i]!.set(key, token, 'PX', 10_000);
    let attempts = 0;
    r.on('acquire', (e) => (attempts = e.attempts));
    const before = await Promise.all(
      env.direct.map(async (c) => Number(/cmdstat_set:calls=(\d+)/.exec(await c.info('commandstats'))?.[1] ?? 0)),
    );
    const refused = await r.acquire('res', 1_000).catch((e: unknown) => e);
    const after = await Promise.all(
      env.direct.map(async (c) => Number(/cmdstat_set:calls=(\d+)/.exec(await c.info('commandstats'))?.[1] ?? 0)),
    );
    expect(refused).toBeInstanceOf(LockContendedError);
    // 1 attempt + 5 retries + at most 3 fast retries after split votes (node-redlock: 1 + retryCount).
    // 1 attempt + 5 retries + at most 3 fast retries after split votes in a row (+1 for the
    // subscriptions' catch-up wake-up, which cuts a sleep short): a few more than node-redlock's
    // 1 + retryCount, where short naps through the whole window made ~1,400 attempts in 2 s.
    expect(attempts).toBeGreaterThanOrEqual(6);
    expect(attempts).toBeLessThanOrEqual(12);
    expect(after[4]! - before[4]!).toBe(attempts);
    for (const c of env.direct.slice(0, 3)) await c.del(key);
  });

  it('a throwing event listener neither fails a granted acquire nor escapes as an uncaught exception', async () => {
    const r = await redlock('listeners');
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown) => uncaught.push(err);
    process.on('uncaughtException', onUncaught);
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.message);
    process.on('warning', onWarning);
    let second = 0;
    try {
      r.on('acquire', () => {
        throw new Error('listener bug');
      });
      r.on('acquire', () => second++);
      r.on('release', () => {
        throw new Error('release listener bug');
      });
      const lock = await r.acquire('res', 1_000);
      expect(second).toBe(1); // the listener after the throwing one still ran
      const released = await (await lock.release()).settled;
      expect(released.deleted).toBe(5);
      // absence: 20 ms for an uncaught exception that must not come
      await sleep(20);
      expect(uncaught).toEqual([]);
      expect(warnings.some((m) => m.includes('listener bug'))).toBe(true);
    } finally {
      process.off('uncaughtException', onUncaught);
      process.off('warning', onWarning);
    }
  });

  it('quit() settles an acquire that is waiting for a held lock at once', async () => {
    const a = await redlock('quit');
    const lock = await a.acquire('res', 5_000);
    const b = new Redlock(env.cluster.urls, { keyPrefix: a.settings.keyPrefix, retryCount: 20, retryDelayMs: 2_000, retryJitterMs: 0 });
    redlocks.push(b);
    const waiting = b.acquire('res', 1_000).catch((e: unknown) => e);
    await waitersAsleep(b); // B has failed its first attempt and sleeps its 2 s delay
    const t0 = performance.now();
    await b.quit();
    const outcome = await waiting;
    expect(performance.now() - t0).toBeLessThan(300);
    expect(outcome).toBeInstanceOf(QuorumUnavailableError);
    expect((outcome as Error).message).toMatch(/quit\(\)/);
    await lock.release();
  });

  it('extend works on a node that is out of memory (maxmemory + noeviction): the lease is extended first, the metadata after', async () => {
    const r = await redlock('oom-extend');
    const lock = await r.acquire('res', 2_000);
    const oom = env.direct.slice(0, 3);
    try {
      for (const c of oom) await c.config('SET', 'maxmemory', '1');
      // Writes are refused there now (OOM); a compare-and-PEXPIRE needs no memory.
      expect(await oom[0]!.set('probe-oom', '1').catch((e: Error) => e.message)).toMatch(/OOM/);
      const before = await oom[0]!.get(r.lockKey('res'));
      await lock.extend(5_000);
      expect(lock.validityMs).toBeGreaterThan(4_000);
      for (const c of oom) expect(await c.pttl(r.lockKey('res'))).toBeGreaterThan(4_000);
      // The best-effort metadata rewrite after the lease leaves the token in front, whether or
      // not the node let it run.
      expect(tokenOf((await oom[0]!.get(r.lockKey('res')))!)).toBe(tokenOf(before!));
    } finally {
      for (const c of oom) await c.config('SET', 'maxmemory', '0');
    }
    await lock.release();
  });

  describe('API robustness', () => {
    /** Commands that a grant, a probe or a release would send: none may go out for a refused argument. */
    const lockTraffic = async (c: Redis) => {
      const stats = await c.info('commandstats');
      return ['set', 'evalsha', 'eval', 'time', 'get'].reduce(
        (n, cmd) => n + Number(new RegExp(`cmdstat_${cmd}:calls=(\\d+)`).exec(stats)?.[1] ?? 0),
        0,
      );
    };
    const trafficOf = () => Promise.all(env.direct.map(lockTraffic));
    /** The counts once nothing is on its way any more (a grant's late voters still get its rounds after acquire() resolved). */
    const settledTraffic = async () => {
      let last = await trafficOf();
      for (;;) {
        // poll: until the traffic counts stop moving
        await sleep(100);
        const now = await trafficOf();
        if (now.every((n, i) => n === last[i])) return now;
        last = now;
      }
    };
    const portOf = (url: string) => new URL(url).port;

    // Two entries of the node list on one redis-server: `localhost` and `127.0.0.1` for the same port
    // (one database: a second SET NX there finds our own key), or two databases of it (both SETs
    // land). The entry checked second votes against, naming the other, so three entries on two
    // servers never reach a quorum (2) on one of them; also when the first entry's replies come
    // later than the second's (here: through a proxy adding 100 ms).
    for (const [dbs, slowFirst] of [
      ['one database', false],
      ['one database', true],
      ['two databases', false],
      ['two databases', true],
    ] as const) {
      it(`two node URLs reaching one redis-server (localhost and 127.0.0.1, ${dbs})${slowFirst ? ', the first answering later' : ''}: one of them votes against naming the other, no quorum on one server`, async () => {
        const [first, second] = env.cluster.supervisor.directUrls();
        const p = portOf(first!);
        // The sandbox password, if the node has one.
        const auth = new URL(first!).password ? `:${new URL(first!).password}@` : '';
        const [db0, db1] = dbs === 'one database' ? ['', ''] : ['/0', '/1'];
        let firstUrl = `redis://${auth}127.0.0.1:${p}${db0}`;
        let proxy: FaultProxy | null = null;
        if (slowFirst) {
          proxy = new FaultProxy({ targetPort: Number(p) });
          firstUrl = `redis://${auth}127.0.0.1:${await proxy.start()}${db0}`;
          proxy.setMode({ kind: 'latency', upMs: 0, upJitterMs: 0, downMs: 100, downJitterMs: 0 });
        }
        const r = new Redlock([firstUrl, `redis://${auth}localhost:${p}${db1}`, second!], {
          keyPrefix: uniquePrefix('duplicate'),
          retryCount: 0,
          nodeTimeoutMs: 2_000,
        });
        redlocks.push(r);
        try {
          await r.markNodesClean();
          // The only other server is held by someone else: a quorum could only come from the first server twice.
          await env.direct[1]!.set(r.lockKey('res'), 'foreign', 'PX', 10_000);
          for (let i = 0; i < 3; i++) {
            const outcome = await r.acquire('res', 1_000).catch((e: unknown) => e);
            if (outcome instanceof Lock) {
              await outcome.release();
              throw new Error(`granted on one redis-server: ${JSON.stringify(outcome.votes)}`);
            }
            expect(outcome).toBeInstanceOf(RedlockError);
            const votes = (outcome as RedlockError).votes;
            // Whichever of the two entries was checked first keeps its vote; the other votes
            // against from its own check on, naming it (so one server never counts twice). With
            // one database the second SET NX finds our own key anyway, and the round may be
            // decided (two against) before the duplicate's own answer.
            const duplicate = votes
              .slice(0, 2)
              .filter((v) => v.reason === 'error' && /same redis-server as node [12]\b/.test(v.detail ?? ''));
            if (dbs === 'two databases') expect(duplicate).toHaveLength(1);
            else expect(duplicate.length).toBeLessThanOrEqual(1);
            // The third node is held by someone else; when the two entries already decided the
            // round (an error and an against), its answer may still be pending.
            expect(votes[2]!.vote).toBe('against');
            expect(['contended', 'pending']).toContain(votes[2]!.reason);
          }
        } finally {
          await env.direct[1]!.del(r.lockKey('res'));
          await r.quit();
          await proxy?.close();
        }
      });
    }

    it('a resource name with a lone surrogate is an InvalidArgumentError before any traffic; a well-formed pair is a name like any other', async () => {
      const r = await redlock('surrogates');
      const before = await settledTraffic();
      for (const name of ['a\uD800', 'a\uDC00b', '\uDBFF', '\uDC00\uD800']) {
        expect(await r.acquire(name, 1_000).catch((e: unknown) => e)).toBeInstanceOf(InvalidArgumentError);
        expect(await r.acquire(['fine', name], 1_000).catch((e: unknown) => e)).toBeInstanceOf(InvalidArgumentError);
      }
      // Two lone surrogates would both have been written as U+FFFD: one key for two names.
      expect(await trafficOf()).toEqual(before);
      const emoji = await r.acquire('\uD83D\uDE00', 1_000);
      expect(await env.direct[0]!.exists(r.lockKey('\uD83D\uDE00'))).toBe(1);
      await emoji.release();
    });

    it('a ttl that leaves less than 1 ms of validity after drift is an InvalidArgumentError before any traffic, for acquire and extend', async () => {
      const r = await redlock('short-ttl');
      const lock = await r.acquire('held', 5_000);
      const before = await settledTraffic();
      // driftFactor 0.01: validity horizon = ttl − (ttl × 0.01 + 2 ms); 3 ms leaves 0.97 ms.
      for (const ttl of [1, 2, 3]) {
        expect(await r.acquire('res', ttl).catch((e: unknown) => e)).toBeInstanceOf(InvalidArgumentError);
        expect(await lock.extend(ttl).catch((e: unknown) => e)).toBeInstanceOf(InvalidArgumentError);
      }
      const drifty = new Redlock(env.cluster.urls, { keyPrefix: r.settings.keyPrefix, retryCount: 0, driftFactor: 0.4 });
      redlocks.push(drifty);
      // driftFactor 0.4: 4 ms leaves 0.4 ms.
      expect(await drifty.acquire('res', 4).catch((e: unknown) => e)).toBeInstanceOf(InvalidArgumentError);
      expect(await trafficOf()).toEqual(before);
      // 4 ms (1.96 ms of validity), and 5 ms at driftFactor 0.4 (1 ms), are valid arguments, whatever the attempts' outcomes.
      expect(await r.acquire('res', 4).catch((e: unknown) => e)).not.toBeInstanceOf(InvalidArgumentError);
      expect(await drifty.acquire('res', 5).catch((e: unknown) => e)).not.toBeInstanceOf(InvalidArgumentError);
      expect(lock.validityMs).toBeGreaterThan(0);
      await lock.release();
    });

    it('a node without TIME (rename-command TIME ""): its vote and node-error event name TIME, and the others still grant', async () => {
      const odd = await startRedisNode([...NO_PERSISTENCE, '--rename-command', 'TIME', '""']);
      try {
        expect(await odd.client.time().catch((e: Error) => e.message)).toMatch(/unknown command/);
        const [first, second] = env.cluster.supervisor.directUrls();
        const r = new Redlock([first!, second!, odd.url], { keyPrefix: uniquePrefix('no-time'), retryCount: 0, nodeTimeoutMs: 2_000 });
        redlocks.push(r);
        const errors: string[] = [];
        r.on('node-error', (e) => {
          if (e.node === 3) errors.push(e.error.message);
        });
        await r.markNodesClean();
        // Held on the second node: the third node's vote decides every attempt on `res`.
        await env.direct[1]!.set(r.lockKey('res'), 'foreign', 'PX', 10_000);
        try {
          for (let i = 0; i < 3; i++) {
            const refused = await r.acquire('res', 1_000).catch((e: unknown) => e);
            expect(refused).toBeInstanceOf(RedlockError);
            const vote = (refused as RedlockError).votes[2]!;
            expect(vote).toMatchObject({ vote: 'against', reason: 'error' });
            expect(vote.detail).toMatch(/\bTIME\b/);
          }
        } finally {
          await env.direct[1]!.del(r.lockKey('res'));
        }
        expect(errors.length).toBeGreaterThan(0);
        for (const message of errors) expect(message).toMatch(/\bTIME\b/);
        // Not a crash: the two other nodes grant.
        const lock = await r.acquire('free', 1_000);
        await lock.release();
        await r.quit();
      } finally {
        await odd.stop();
      }
    });
  });

  it('no unhandled rejections happened in this file', () => {
    expect(unhandled).toEqual([]);
  });
});
