import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScenarioCluster } from '@/lib/scenarios/cluster';
import { ALL_SCRIPTS, PROBE_SCRIPT } from '@/lib/redlock/scripts';
import { markNodeClean, nodeTimeMs } from '@/lib/redlock';
import { startTestCluster, uniquePrefix, type TestCluster } from '../support/cluster';

/** The scenario engine's direct reads of the nodes: token and holder from the lock value, and the drift step. */

let cluster: TestCluster;
let scenario: ScenarioCluster;

beforeAll(async () => {
  cluster = await startTestCluster({ nodes: 3, persistence: 'none' });
  const supervisor = cluster.supervisor;
  scenario = await ScenarioCluster.open({ nodes: async () => supervisor.nodes(), act: (id, action) => supervisor.act(id, action) });
  await scenario.whenReadable(5_000);
});
afterAll(async () => {
  scenario?.close();
  await cluster?.stop();
});

describe('ScenarioCluster on real nodes', () => {
  it('reads each lock key\'s token, with the client named in the metadata after it', async () => {
    const p = uniquePrefix('scn-read');
    const node1 = scenario.directClient(1);
    await node1.set(`${p}lock:a`, `tok-a ${JSON.stringify({ client: 'alice', owner: 'x' })}`, 'PX', 20_000);
    // A bare token (no metadata) next to a key of the old layout, which is never read.
    await node1.set(`${p}lock:b`, 'tok-b', 'PX', 20_000);
    await node1.set(`${p}meta:tok-b`, JSON.stringify({ client: 'mallory' }), 'PX', 20_000);
    // Bad JSON and a metadata object without a client.
    await node1.set(`${p}lock:c`, 'tok-c {"client": "cut', 'PX', 20_000);
    await node1.set(`${p}lock:d`, `tok-d ${JSON.stringify({ owner: 'y', client: 7 })}`, 'PX', 20_000);

    const sample = await scenario.read(1, () => 0, (r) => `${p}lock:${r}`, ['a', 'b', 'c', 'd', 'e']);
    expect(sample.ok).toBe(true);
    expect(sample.keys.map((k) => [k.resource, k.token, k.client])).toEqual([['a', 'tok-a', 'alice'], ['b', 'tok-b', '?'], ['c', 'tok-c', '?'], ['d', 'tok-d', '?']]);
    expect(sample.keys.every((k) => k.pttl > 15_000)).toBe(true);
    expect((await scenario.read(2, () => 0, (r) => `${p}lock:${r}`, ['a'])).keys).toEqual([]);
    expect(await scenario.read(2, () => 0, (r) => `${p}lock:${r}`, [])).toMatchObject({ ok: true, keys: [] });
  });

  it('with the sentinel key, a reading says whether the node sits out a quarantine and until when (run time, by the node\'s clock)', async () => {
    const p = uniquePrefix('scn-quarantine');
    const node1 = scenario.directClient(1);
    const key = (r: string) => `${p}lock:${r}`;
    // No sentinel: nothing running (a missing sentinel is the lock core's to judge, not a quarantine yet).
    expect((await scenario.read(1, () => 1_000, key, ['a'], `${p}epoch`)).quarantine).toBeNull();
    await markNodeClean(node1, { keyPrefix: p, maxTtlMs: 4_000 });
    expect((await scenario.read(1, () => 1_000, key, ['a'], `${p}epoch`)).quarantine).toBeNull();
    const until = (await nodeTimeMs(node1)) + 3_000;
    await node1.hset(`${p}epoch`, 'quarantineUntil', String(until), 'cause', 'restart');
    const reading = await scenario.read(1, () => 1_000, key, ['a'], `${p}epoch`);
    expect(reading.quarantine?.cause).toBe('restart');
    expect(reading.quarantine!.until).toBeGreaterThan(1_000 + 2_800);
    expect(reading.quarantine!.until).toBeLessThanOrEqual(1_000 + 3_000);
    // Without the sentinel key the reading does not look (undefined: not read).
    expect((await scenario.read(1, () => 1_000, key, ['a'])).quarantine).toBeUndefined();
  });

  it('the drift step shortens the lock key, value untouched, only while the token holds', async () => {
    const p = uniquePrefix('scn-drift');
    const node2 = scenario.directClient(2);
    const value = `tok-r ${JSON.stringify({ client: 'bob' })}`;
    await node2.set(`${p}lock:r`, value, 'PX', 20_000);
    const { before, after } = await scenario.shortenTtl(2, `${p}lock:r`, 'tok-r', 100);
    expect(before).toBeGreaterThan(19_000);
    expect(after).toBe(Math.floor(before / 2));
    expect(await node2.pttl(`${p}lock:r`)).toBeLessThanOrEqual(after);
    expect(await node2.get(`${p}lock:r`)).toBe(value);
    // Another token, or a token the value merely starts with, does not hold the key.
    expect(await scenario.shortenTtl(2, `${p}lock:r`, 'tok-other', 100)).toEqual({ before: -1, after: -1 });
    expect(await scenario.shortenTtl(2, `${p}lock:r`, 'tok', 100)).toEqual({ before: -1, after: -1 });
    expect(await node2.pttl(`${p}lock:r`)).toBeGreaterThan(after / 2);
    // A bare token holds the key too.
    await node2.set(`${p}lock:bare`, 'tok-bare', 'PX', 20_000);
    expect((await scenario.shortenTtl(2, `${p}lock:bare`, 'tok-bare', 100)).after).toBeLessThan(10_001);
    expect(await scenario.shortenTtl(2, `${p}lock:missing`, 'tok-bare', 100)).toEqual({ before: -1, after: -1 });
  });

  it('warming up a restarted node loads the lock core\'s scripts but never the probe, so a successful fast probe still proves a check ran there', async () => {
    const node3 = scenario.directClient(3);
    await node3.script('FLUSH');
    await scenario.warmUp([3]);
    const others = ALL_SCRIPTS.filter((s) => s !== PROBE_SCRIPT);
    expect(await node3.script('EXISTS', ...others.map((s) => s.sha))).toEqual(others.map(() => 1));
    expect(await node3.script('EXISTS', PROBE_SCRIPT.sha)).toEqual([0]);
  });
});
