import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { NodeKeyWatch } from '@/lib/inspect/key-watch';
import { hasNotifyFlags, LockIndex, snapshot, type IndexedSnapshot, type Snapshot } from '@/lib/inspect';
import { startTestCluster, uniquePrefix, type TestCluster } from '../support/cluster';
import { putLock } from '../support/locks';

/**
 * The live index (lib/inspect/lock-index.ts) must say what a full scan says. Every test changes
 * the nodes behind the index's back in a way that is easy to miss (no event at all, events lost,
 * events crossing the re-read), then compares the index's snapshot with a scan made after it.
 */
let cluster: TestCluster;
let clients: Redis[];
const indexes: LockIndex[] = [];

beforeAll(async () => {
  cluster = await startTestCluster({ nodes: 5, persistence: 'none' });
  clients = [1, 2, 3, 4, 5].map((id) => cluster.client(id));
  await Promise.all(clients.map((c) => c.connect()));
});
afterEach(() => {
  for (const index of indexes.splice(0)) index.stop();
});
afterAll(async () => {
  await cluster?.stop();
});

function startIndex(keyPrefix: string, manageConfig = true, batchTimeoutMs?: number): LockIndex {
  const index = new LockIndex(clients, { keyPrefix, manageConfig, batchTimeoutMs });
  indexes.push(index);
  return index;
}

/** What must agree: per lock its state, majority token, and which node holds which token. TTLs drift by ms. */
function summary(snap: Snapshot) {
  return snap.locks.map((l) => ({
    resource: l.resource,
    state: l.state,
    majority: l.majorityToken,
    // Without a majority the view shows some holder's metadata, and a scan reads it on fewer nodes.
    owner: l.majorityToken === null ? undefined : (l.meta?.owner ?? null),
    cells: l.cells.map((c) => (c.known ? (c.present ? c.token : '-') : '?')).join(' '),
  }));
}

async function expectAgrees(index: LockIndex, keyPrefix: string): Promise<IndexedSnapshot> {
  // randomChange() writes keys that live 30–130 ms: let them run out first, or one could expire
  // between the two readings (and the index, which ages TTLs from when it sent its read, drops a
  // key a round trip early where a scan still shows it at 0 ms).
  // pace: randomChange()'s 30–130 ms keys run out first (see above)
  await new Promise((r) => setTimeout(r, 200));
  const indexed = await index.snapshot();
  const scanned = await snapshot(clients, { keyPrefix });
  expect(summary(indexed)).toEqual(summary(scanned));
  expect(indexed.stateCounts).toEqual(scanned.stateCounts);
  expect(indexed.nodes.map((n) => n.keys)).toEqual(scanned.nodes.map((n) => n.keys));
  // TTLs are aged to the snapshot's end: the index's are never longer than the scan's plus the time between them.
  const ttl = new Map(scanned.locks.map((l) => [l.key, l.cells.map((c) => c.pttlMs)]));
  for (const lock of indexed.locks) {
    lock.cells.forEach((c, i) => {
      const other = ttl.get(lock.key)![i];
      if (c.pttlMs !== null && other !== null && other !== undefined && other >= 0) expect(Math.abs(c.pttlMs - other)).toBeLessThan(1_500);
    });
  }
  return indexed;
}

/** A small deterministic PRNG, so a failure replays. */
function prng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One random change on one node, of the kinds the lock core and operators make. */
async function randomChange(rand: () => number, keyPrefix: string, step: number): Promise<void> {
  const client = clients[Math.floor(rand() * 5)]!;
  const key = `${keyPrefix}lock:r${Math.floor(rand() * 40)}`;
  const token = `tok-${step}-${Math.floor(rand() * 3)}`;
  const meta = JSON.stringify({ owner: `svc-${step % 7}` });
  switch (Math.floor(rand() * 8)) {
    case 0:
    case 1:
      await client.set(key, `${token} ${meta}`, 'PX', 20_000 + Math.floor(rand() * 10_000), 'NX');
      break;
    case 2:
      // An extend's or fence's rewrite: SETRANGE in place, only on a key that is there (extend.lua).
      await client.eval(
        "if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('SETRANGE', KEYS[1], 0, ARGV[1]) end",
        1,
        key,
        `${token} ${meta}`,
      );
      break;
    case 3:
      await client.pexpire(key, 40_000, 'GT');
      break;
    case 4:
      await client.del(key);
      break;
    case 5:
      await client.set(key, token, 'PX', 30 + Math.floor(rand() * 100));
      break; // expires soon
    case 6:
      await client
        .set(`${keyPrefix}other:${step}`, `${token} ${meta}`, 'PX', 20_000)
        .then(() => client.rename(`${keyPrefix}other:${step}`, key));
      break;
    default:
      await client.eval(`redis.call('DEL', KEYS[1]); return redis.call('SET', KEYS[1], ARGV[1], 'PX', 25000)`, 1, key, `${token} ${meta}`);
      break;
  }
}

/** A client for node `id` that waits out a long script (the shared ones give up after 1 s). */
function patientClient(id: number): Redis {
  return cluster.client(id, { commandTimeout: 20_000, lazyConnect: false, enableOfflineQueue: true });
}

/** Delete every key under `pattern` on a node (the burst's junk), without a 1 s limit. */
async function dropKeys(id: number, pattern: string): Promise<void> {
  await patientClient(id).eval(`for _, k in ipairs(redis.call('KEYS', ARGV[1])) do redis.call('DEL', k) end`, 0, pattern);
}

/** KEYS[1] the lock key; ARGV[1] a junk prefix, ARGV[2] how many junk keys to SET first (two events each). */
const BURST_THEN_DEL = `
for i = 1, tonumber(ARGV[2]) do redis.call('SET', ARGV[1] .. i, 'x', 'PX', 60000) end
return redis.call('DEL', KEYS[1])`;

/** randomChange() in a loop until stop(), which resolves once the last change has been made. */
function keepWriting(rand: () => number, keyPrefix: string): { steps(): number; stop(): Promise<void> } {
  let writing = true;
  let step = 0;
  const loop = (async () => {
    while (writing) await randomChange(rand, keyPrefix, step++);
  })();
  return {
    steps: () => step,
    stop: async () => {
      writing = false;
      await loop;
    },
  };
}

describe('the live lock index on real nodes', () => {
  it('agrees with a full scan through grants, rewrites, extensions, renames, releases and expiries, re-reading only what changed', async () => {
    const p = uniquePrefix('index-ops');
    for (let i = 0; i < 300; i++)
      await putLock(
        clients,
        p,
        `base-${i}`,
        `tok-base-${i}`,
        [1, 2, 3, 4, 5].filter((n) => (i + n) % 4 !== 0),
        { meta: { owner: 'base' } },
      );
    const index = startIndex(p);
    const first = await expectAgrees(index, p);
    expect(first.nodes.map((n) => [n.indexed, n.rescan])).toEqual([1, 2, 3, 4, 5].map(() => [false, 'first-build']));
    expect(first.locks.length).toBe(300);
    const rand = prng(7);
    for (let round = 0; round < 6; round++) {
      for (let step = 0; step < 60; step++) await randomChange(rand, p, round * 100 + step);
      if (round % 2 === 1) await new Promise((r) => setTimeout(r, 150)); // pace: let the short TTLs run out
      const snap = await expectAgrees(index, p);
      expect(snap.nodes.every((n) => n.ok && n.indexed && n.rescan === null)).toBe(true);
      // Only the keys named by events were read again, not the 300+ base locks on each node.
      expect(snap.nodes.reduce((sum, n) => sum + n.reread, 0)).toBeGreaterThan(0);
      expect(Math.max(...snap.nodes.map((n) => n.reread))).toBeLessThan(60);
    }
  });

  it('stays true while writers race its snapshots (an event that crosses a re-read keeps the key dirty)', async () => {
    const p = uniquePrefix('index-race');
    const index = startIndex(p);
    await index.snapshot();
    const rand = prng(11);
    const writer = keepWriting(rand, p);
    let snapshots = 0;
    while (writer.steps() < 300 || snapshots < 10) {
      await index.snapshot();
      snapshots++;
    }
    await writer.stop();
    const snap = await expectAgrees(index, p);
    expect(snap.nodes.every((n) => n.indexed)).toBe(true);
  });

  it('sees a change the node made just before the snapshot, behind a backlog of other events (the barrier)', async () => {
    const p = uniquePrefix('index-barrier');
    await putLock(clients, p, 'late', 'tok-late', [1, 2, 3, 4, 5]);
    const index = startIndex(p, true, 10_000);
    await index.snapshot();
    // 100,000 events on other keys, then the release: the client is still parsing the backlog when
    // any other reply from the node (say, to the snapshot's INFO) has long arrived.
    await patientClient(1).eval(BURST_THEN_DEL, 1, `${p}lock:late`, `${p}junk:`, 50_000);
    const snap = await index.snapshot();
    expect(snap.locks[0]!.cells.map((c) => c.present)).toEqual([false, true, true, true, true]);
    expect(snap.nodes[0]).toMatchObject({ indexed: true, reread: 1 });
    index.stop();
    await dropKeys(1, `${p}junk:*`);
  });

  it('a key past its TTL is absent even when its expired event never comes', async () => {
    const p = uniquePrefix('index-ttl');
    const index = startIndex(p);
    await putLock(clients, p, 'long', 'tok-long', [1, 2, 3, 4, 5], { pxMs: 30_000 });
    await index.snapshot();
    const t0 = Date.now();
    await putLock(clients, p, 'short', 'tok-short', [1, 2, 3, 4, 5], { pxMs: 1_000 });
    expect((await index.snapshot()).locks.map((l) => l.resource)).toEqual(['long', 'short']);
    // While clients are paused, Redis expires nothing (so publishes no `expired`) but still answers reads.
    await Promise.all(clients.map((c) => c.client('PAUSE', 5_000, 'WRITE')));
    try {
      expect(Date.now() - t0).toBeLessThan(900); // paused before the TTL ran out: no event was published
      // pace: past the key's TTL, with writes paused (so no expired event)
      await new Promise((r) => setTimeout(r, 1_200 - (Date.now() - t0)));
      expect(await clients[0]!.exists(`${p}lock:short`)).toBe(0); // logically gone…
      const snap = await index.snapshot();
      expect(snap.nodes.every((n) => n.indexed && n.reread === 0)).toBe(true); // …with no event to say so
      expect(snap.locks.map((l) => l.resource)).toEqual(['long']);
    } finally {
      await Promise.all(clients.map((c) => c.client('UNPAUSE')));
    }
  });

  it('a FLUSHALL, which publishes no per-key events, is caught by the node fingerprint and the node is scanned again', async () => {
    const p = uniquePrefix('index-flush');
    await putLock(clients, p, ['a', 'b'], 'tok-ab', [1, 2, 3, 4, 5]);
    const index = startIndex(p);
    await index.snapshot();
    expect((await index.snapshot()).nodes.every((n) => n.indexed)).toBe(true);
    // Node 2's data vanishes wholesale (other tests' keys too: this file's only FLUSHALL, on one node).
    await clients[1]!.flushall();
    const snap = await expectAgrees(index, p);
    expect(snap.nodes.map((n) => n.indexed)).toEqual([true, false, true, true, true]);
    expect(snap.nodes[1]!.rescan).toBe('keys-replaced');
    expect(snap.locks.map((l) => l.cells[1]!.present)).toEqual([false, false]);
    expect((await index.snapshot()).nodes.every((n) => n.indexed)).toBe(true);
  });

  it('a node that restarts without its data is scanned again (the subscription dropped)', async () => {
    const p = uniquePrefix('index-restart');
    await putLock(clients, p, 'r', 'tok-r', [1, 2, 3, 4, 5]);
    const index = startIndex(p);
    await index.snapshot();
    await cluster.supervisor.restart(3);
    await cluster.supervisor.waitUntilUp(3);
    // The restarted node's notification setting is gone too: the index turns it on again (manageConfig).
    let snap = await index.snapshot();
    for (let i = 0; i < 40 && !snap.nodes[2]!.ok; i++) {
      // poll: until the restarted node reads ok
      await new Promise((r) => setTimeout(r, 100));
      snap = await index.snapshot();
    }
    expect(snap.nodes[2]).toMatchObject({ ok: true, indexed: false, keys: 0 });
    // (Its new subscription may still be on its way: then this was a plain scan, and says so.)
    expect(['events-lost', 'subscribe-failed']).toContain(snap.nodes[2]!.rescan);
    expect(snap.locks[0]!.cells.map((c) => c.present)).toEqual([true, true, false, true, true]);
    await putLock(clients, p, 'after', 'tok-after', [3]);
    await expectAgrees(index, p);
    await expect.poll(async () => (await index.snapshot()).nodes[2]!.indexed, { timeout: 5_000 }).toBe(true);
  });

  it('a dropped notification connection (events lost) means a full scan of that node, then the index again', async () => {
    const p = uniquePrefix('index-kill');
    await putLock(clients, p, ['x', 'y'], 'tok-xy', [1, 2, 3, 4, 5]);
    const index = startIndex(p);
    await index.snapshot();
    await clients[3]!.client('KILL', 'TYPE', 'pubsub');
    await clients[3]!.del(`${p}lock:x`); // likely published while nobody listened
    const snap = await expectAgrees(index, p);
    expect(snap.nodes[3]!.indexed).toBe(false);
    expect(['events-lost', 'subscribe-failed']).toContain(snap.nodes[3]!.rescan);
    expect(snap.locks.find((l) => l.resource === 'x')!.cells[3]!.present).toBe(false);
    await expect.poll(async () => (await expectAgrees(index, p)).nodes[3]!.indexed, { timeout: 5_000 }).toBe(true);
  });

  it('notifications turned off on a node: scanned in full and turned on again where ours; never indexed where not', async () => {
    const p = uniquePrefix('index-config');
    await putLock(clients, p, 'k', 'tok-k', [1, 2, 3, 4, 5]);
    const index = startIndex(p);
    await index.snapshot();
    await clients[4]!.config('SET', 'notify-keyspace-events', '');
    await clients[4]!.del(`${p}lock:k`); // no event
    try {
      const snap = await expectAgrees(index, p);
      expect(snap.nodes[4]).toMatchObject({ indexed: false, rescan: 'notifications-off' });
      expect(hasNotifyFlags(((await clients[4]!.config('GET', 'notify-keyspace-events')) as string[])[1]!)).toBe(true);
      expect((await index.snapshot()).nodes[4]!.indexed).toBe(true);

      await clients[4]!.config('SET', 'notify-keyspace-events', '');
      const other = new LockIndex(clients, { keyPrefix: p, manageConfig: false });
      indexes.push(other);
      await other.snapshot();
      await clients[4]!.set(`${p}lock:k`, 'tok-k2', 'PX', 30_000);
      const unmanaged = await other.snapshot();
      expect(unmanaged.nodes.map((n) => n.indexed)).toEqual([true, true, true, true, false]);
      expect(unmanaged.nodes[4]!.rescan).toBe('no-notifications');
      expect(unmanaged.locks[0]!.cells[4]!.token).toBe('tok-k2');
      expect(await clients[4]!.config('GET', 'notify-keyspace-events')).toEqual(['notify-keyspace-events', '']);
    } finally {
      await clients[4]!.config('SET', 'notify-keyspace-events', 'Eg$x');
    }
  });

  it('a build under writes: it subscribes before it scans, so what it did not scan it hears', async () => {
    const p = uniquePrefix('index-build-writes');
    await putLock(clients, p, ['e1', 'e2', 'e3'], 'tok-e', [1, 2, 3, 4, 5]);
    // Notifications off on node 2: the build turns them on (manageConfig) before it scans there.
    await clients[1]!.config('SET', 'notify-keyspace-events', '');
    const writer = keepWriting(prng(23), p);
    const index = startIndex(p);
    const built = await index.snapshot();
    await writer.stop();
    expect(built.nodes.every((n) => n.ok && !n.indexed)).toBe(true);
    const snap = await expectAgrees(index, p);
    expect(snap.nodes.every((n) => n.indexed)).toBe(true);
  });

  it('notifications turned off and on again between two snapshots (changes meanwhile unheard): the node is scanned again', async () => {
    const p = uniquePrefix('index-toggle');
    await putLock(clients, p, 't', 'tok-t', [1, 2, 3, 4, 5]);
    const index = startIndex(p);
    await index.snapshot();
    await clients[0]!.config('SET', 'notify-keyspace-events', '');
    await clients[0]!.del(`${p}lock:t`);
    await clients[0]!.config('SET', 'notify-keyspace-events', 'Eg$x');
    const snap = await expectAgrees(index, p);
    expect(snap.nodes[0]).toMatchObject({ indexed: false, rescan: 'keys-replaced' }); // CONFIG SET calls moved
    expect(snap.locks[0]!.cells[0]!.present).toBe(false);
  });

  it('an aborted snapshot rejects with its reason and does not hold up the next; a stopped index leaves no connection behind', async () => {
    const p = uniquePrefix('index-abort');
    await putLock(clients, p, 'a', 'tok-a', [1, 2, 3, 4, 5]);
    const index = startIndex(p);
    const controller = new AbortController();
    const aborted = index.startSnapshot(controller.signal);
    controller.abort(new Error('the client went away'));
    await expect(aborted.done).rejects.toThrow('the client went away');
    const next = await index.snapshot();
    expect(next.locks.map((l) => l.resource)).toEqual(['a']);
    // Stopped mid-build, at moments spread over its subscribing: none of its notification connections survive.
    index.stop();
    for (let delayMs = 0; delayMs < 12; delayMs++) {
      const other = new LockIndex(clients, { keyPrefix: p, manageConfig: true });
      const run = other.startSnapshot();
      // pace: stops spread over the build's subscribing (0–11 ms)
      await new Promise((r) => setTimeout(r, delayMs));
      other.stop();
      await run.done.catch(() => undefined);
    }
    await expect
      .poll(
        async () => {
          const lists = await Promise.all(clients.map((c) => c.call('CLIENT', 'LIST', 'TYPE', 'pubsub') as Promise<string>));
          return lists.join('').trim();
        },
        { timeout: 3_000 },
      )
      .toBe('');
  });

  it('events lost while a build is scanning: the node is not trusted afterwards, and is scanned again', async () => {
    const p = uniquePrefix('index-lost');
    const many = `local n = tonumber(ARGV[2]) for i = 1, n do redis.call('SET', ARGV[1] .. i, ARGV[3], 'PX', 60000) end return n`;
    await patientClient(3).eval(many, 0, `${p}lock:k`, 60_000, 'tok-old');
    try {
      const index = startIndex(p);
      const building = index.snapshot();
      // pace: subscribed by now; the scan of 60,000 keys is not done (the kill must land mid-scan)
      await new Promise((r) => setTimeout(r, 150));
      await clients[2]!.client('KILL', 'TYPE', 'pubsub');
      await patientClient(3).eval(many, 0, `${p}lock:k`, 60_000, 'tok-new'); // before the subscriber is back
      await building;
      // (Whichever way the timing fell, the answer must be the new tokens: the build is not trusted.)
      const snap = await index.snapshot();
      expect(snap.nodes[2]).toMatchObject({ ok: true, keys: 60_000 });
      expect(new Set(snap.locks.map((l) => l.cells[2]!.token))).toEqual(new Set(['tok-new']));
    } finally {
      await patientClient(3).eval(`for i = 1, 60000 do redis.call('DEL', ARGV[1] .. i) end`, 0, `${p}lock:k`);
    }
  });

  it('a run says whether it is scanning a node in full: during the build, not while it only catches up', async () => {
    const p = uniquePrefix('index-scanning');
    await putLock(clients, p, ['a', 'b', 'c'], 'tok', [1, 2, 3, 4, 5]);
    const index = startIndex(p);
    /** run.scanning() at every turn of the event loop until the run ends, then once more. */
    const watch = async (run: ReturnType<LockIndex['startSnapshot']>) => {
      const seen: boolean[] = [];
      while (!run.finished()) {
        seen.push(run.scanning());
        await new Promise((r) => setImmediate(r));
      }
      return { seen, after: run.scanning() };
    };
    const build = await watch(index.startSnapshot());
    expect(build.seen).toContain(true);
    expect(build.after).toBe(false);
    await putLock(clients, p, ['d'], 'tok', [1, 2, 3]);
    const caughtUp = await watch(index.startSnapshot());
    expect(caughtUp.seen.length).toBeGreaterThan(1);
    expect(caughtUp.seen).not.toContain(true);
    expect((await index.snapshot()).nodes.every((n) => n.indexed)).toBe(true);
  });

  // Node 3's connection stops answering CONFIG GET from its `stallFrom`-th call on (the index reads
  // the notification settings before subscribing, then again behind the subscription): a node that
  // stopped at that moment (a real node, a real connection; only the answer is held back).
  it.each([1, 2])(
    'a node that stops answering while the index reads its notification settings (read %i) is scanned plainly, not waited for',
    async (stallFrom) => {
      const p = uniquePrefix(`index-config-hang-${stallFrom}`);
      await putLock(clients, p, ['a'], 'tok', [1, 2, 3, 4, 5]);
      let reads = 0;
      const stalled = new Proxy(clients[2]!, {
        get(target, prop) {
          if (prop === 'config') {
            return (...args: Parameters<Redis['config']>) =>
              String(args[0]).toUpperCase() === 'GET' && ++reads >= stallFrom ? new Promise(() => undefined) : target.config(...args);
          }
          const value: unknown = Reflect.get(target, prop, target);
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        },
      });
      const index = new LockIndex([clients[0]!, clients[1]!, stalled, clients[3]!, clients[4]!], {
        keyPrefix: p,
        manageConfig: true,
        batchTimeoutMs: 300,
      });
      indexes.push(index);
      const t0 = performance.now();
      const snap = await index.snapshot();
      expect(performance.now() - t0).toBeLessThan(3_000);
      expect(reads).toBe(stallFrom);
      expect(snap.nodes[2]).toMatchObject({ ok: true, indexed: false, rescan: 'subscribe-failed', keys: 1 });
      expect(snap.locks.map((l) => [l.resource, l.holders])).toEqual([['a', 5]]);
    },
    10_000,
  );

  it('overlapping calls share one refresh; a stopped index refuses', async () => {
    const p = uniquePrefix('index-share');
    const index = startIndex(p);
    const a = index.startSnapshot();
    expect(index.startSnapshot()).toBe(a);
    await a.done;
    expect(index.startSnapshot()).not.toBe(a);
    index.stop();
    expect(() => index.startSnapshot()).toThrow('stopped');
  });
});

describe('NodeKeyWatch on a real node', () => {
  it('the barrier resolves only after every event published before it; a re-read crossed by an event stays dirty', async () => {
    const p = uniquePrefix('watch');
    const watch = new NodeKeyWatch(clients[1]!, `${p}lock:`, 1_000);
    try {
      await clients[1]!.set(`${p}lock:a`, 'tok', 'PX', 10_000);
      expect(await watch.subscribe(true, 2_000)).toBe('subscribed');
      await patientClient(2).eval(BURST_THEN_DEL, 1, `${p}lock:a`, `${p}junk:`, 50_000);
      await watch.barrier(10_000);
      // Only lock keys count.
      expect([...watch.dirty.keys()]).toEqual([`${p}lock:a`]);

      const sentAt = watch.seq; // a re-read of lock:a is sent now…
      await clients[1]!.set(`${p}lock:a`, 'tok', 'PX', 10_000); // …and crossed by a change
      await watch.barrier(2_000);
      watch.settle(`${p}lock:a`, sentAt);
      expect(watch.dirty.has(`${p}lock:a`)).toBe(true);
      watch.settle(`${p}lock:a`, watch.seq);
      expect(watch.dirty.size).toBe(0);

      // More changed keys than it may keep: it forgets them and says the copy is no longer whole.
      watch.intact = true;
      const generation = watch.generation;
      await clients[1]!.eval(`for i = 1, 1001 do redis.call('SET', ARGV[1] .. i, 't', 'PX', 10000) end`, 0, `${p}lock:many-`);
      await watch.barrier(2_000);
      expect(watch.intact).toBe(false);
      expect(watch.generation).toBeGreaterThan(generation);
    } finally {
      watch.stop();
      await dropKeys(2, `${p}*`);
    }
  });
});
