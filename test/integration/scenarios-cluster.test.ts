import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScenarioCluster } from '@/lib/scenarios/cluster';
import { startTestCluster, uniquePrefix, type TestCluster } from '../support/cluster';

/** The scenario engine's direct reads of the nodes: holder by the token's metadata, and the drift step. */

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
  it('reads each lock key with the client named in its token\'s metadata, never an orphan\'s', async () => {
    const p = uniquePrefix('scn-read');
    const node1 = scenario.directClient(1);
    await node1.set(`${p}lock:a`, 'tok-a', 'PX', 20_000);
    await node1.set(`${p}meta:tok-a`, JSON.stringify({ client: 'alice', owner: 'x' }), 'PX', 20_000);
    await node1.set(`${p}lock:b`, 'tok-b', 'PX', 20_000);
    await node1.set(`${p}meta:tok-orphan`, JSON.stringify({ client: 'mallory' }), 'PX', 20_000);
    await node1.set(`${p}lock:c`, 'tok-c', 'PX', 20_000);
    await node1.hset(`${p}meta:tok-c`, { client: 'old-hash' });
    await node1.hset(`${p}meta:d`, { client: 'by-resource' });

    const sample = await scenario.read(1, () => 0, (r) => `${p}lock:${r}`, `${p}meta:`, ['a', 'b', 'c', 'd']);
    expect(sample.ok).toBe(true);
    expect(sample.keys.map((k) => [k.resource, k.token, k.client])).toEqual([['a', 'tok-a', 'alice'], ['b', 'tok-b', '?'], ['c', 'tok-c', '?']]);
    expect(sample.keys.every((k) => k.pttl > 15_000)).toBe(true);
    expect((await scenario.read(2, () => 0, (r) => `${p}lock:${r}`, `${p}meta:`, ['a'])).keys).toEqual([]);
    expect(await scenario.read(2, () => 0, (r) => `${p}lock:${r}`, `${p}meta:`, [])).toMatchObject({ ok: true, keys: [] });
  });

  it('the drift step shortens the lock key and its token\'s metadata, only while the token holds', async () => {
    const p = uniquePrefix('scn-drift');
    const node2 = scenario.directClient(2);
    await node2.set(`${p}lock:r`, 'tok-r', 'PX', 20_000);
    await node2.set(`${p}meta:tok-r`, JSON.stringify({ client: 'bob' }), 'PX', 20_000);
    const { before, after } = await scenario.shortenTtl(2, `${p}lock:r`, `${p}meta:`, 'tok-r', 100);
    expect(before).toBeGreaterThan(19_000);
    expect(after).toBe(Math.floor(before / 2));
    expect(await node2.pttl(`${p}lock:r`)).toBeLessThanOrEqual(after);
    expect(await node2.pttl(`${p}meta:tok-r`)).toBeLessThanOrEqual(after);
    expect(await scenario.shortenTtl(2, `${p}lock:r`, `${p}meta:`, 'tok-other', 100)).toEqual({ before: -1, after: -1 });
    expect(await node2.pttl(`${p}lock:r`)).toBeGreaterThan(after / 2);
  });
});
