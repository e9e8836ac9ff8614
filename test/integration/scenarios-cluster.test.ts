import { describe, expect, it } from 'vitest';
import { ALL_SCRIPTS, PROBE_SCRIPT } from '@redlock-console/redlock/internals';
import { markNodeClean, nodeTimeMs } from '@redlock-console/redlock';
import { uniquePrefix } from '../support/cluster';
import { scenarioNodes } from '../support/scenario-nodes';

/**
 * The scenario engine on real nodes: its direct reads (token and holder from the lock value, the
 * quarantine a node records), the drift step, warming up a restarted node, and whole scenarios run
 * end to end on five real redis-servers behind their fault proxies.
 */

const env = scenarioNodes();
const { runToEnd } = env;

describe('ScenarioCluster on real nodes', () => {
  it("reads each lock key's token, with the client named in the metadata after it", async () => {
    const p = uniquePrefix('scn-read');
    const node1 = env.scenario.directClient(1);
    await node1.set(`${p}lock:a`, `tok-a ${JSON.stringify({ client: 'alice', owner: 'x' })}`, 'PX', 20_000);
    // A bare token (no metadata) next to a key of the old layout, which is never read.
    await node1.set(`${p}lock:b`, 'tok-b', 'PX', 20_000);
    await node1.set(`${p}meta:tok-b`, JSON.stringify({ client: 'mallory' }), 'PX', 20_000);
    // Bad JSON and a metadata object without a client.
    await node1.set(`${p}lock:c`, 'tok-c {"client": "cut', 'PX', 20_000);
    await node1.set(`${p}lock:d`, `tok-d ${JSON.stringify({ owner: 'y', client: 7 })}`, 'PX', 20_000);

    const sample = await env.scenario.read(
      1,
      () => 0,
      (r) => `${p}lock:${r}`,
      ['a', 'b', 'c', 'd', 'e'],
    );
    expect(sample.ok).toBe(true);
    expect(sample.keys.map((k) => [k.resource, k.token, k.client])).toEqual([
      ['a', 'tok-a', 'alice'],
      ['b', 'tok-b', '?'],
      ['c', 'tok-c', '?'],
      ['d', 'tok-d', '?'],
    ]);
    expect(sample.keys.every((k) => k.pttl > 15_000)).toBe(true);
    expect(
      (
        await env.scenario.read(
          2,
          () => 0,
          (r) => `${p}lock:${r}`,
          ['a'],
        )
      ).keys,
    ).toEqual([]);
    expect(
      await env.scenario.read(
        2,
        () => 0,
        (r) => `${p}lock:${r}`,
        [],
      ),
    ).toMatchObject({ ok: true, keys: [] });
  });

  it("with the sentinel key, a reading says whether the node sits out a quarantine and until when (run time, by the node's clock)", async () => {
    const p = uniquePrefix('scn-quarantine');
    const node1 = env.scenario.directClient(1);
    const key = (r: string) => `${p}lock:${r}`;
    // No sentinel: nothing running (a missing sentinel is the lock core's to judge, not a quarantine yet).
    expect((await env.scenario.read(1, () => 1_000, key, ['a'], `${p}epoch`)).quarantine).toBeNull();
    await markNodeClean(node1, { keyPrefix: p, maxTtlMs: 4_000 });
    expect((await env.scenario.read(1, () => 1_000, key, ['a'], `${p}epoch`)).quarantine).toBeNull();
    const until = (await nodeTimeMs(node1)) + 3_000;
    await node1.hset(`${p}epoch`, 'quarantineUntil', String(until), 'cause', 'restart');
    const reading = await env.scenario.read(1, () => 1_000, key, ['a'], `${p}epoch`);
    expect(reading.quarantine?.cause).toBe('restart');
    expect(reading.quarantine!.until).toBeGreaterThan(1_000 + 2_800);
    expect(reading.quarantine!.until).toBeLessThanOrEqual(1_000 + 3_000);
    // Without the sentinel key the reading does not look (undefined: not read).
    expect((await env.scenario.read(1, () => 1_000, key, ['a'])).quarantine).toBeUndefined();
  });

  it('the drift step shortens the lock key, value untouched, only while the token holds', async () => {
    const p = uniquePrefix('scn-drift');
    const node2 = env.scenario.directClient(2);
    const value = `tok-r ${JSON.stringify({ client: 'bob' })}`;
    await node2.set(`${p}lock:r`, value, 'PX', 20_000);
    const { before, after } = await env.scenario.shortenTtl(2, `${p}lock:r`, 'tok-r', 100);
    expect(before).toBeGreaterThan(19_000);
    expect(after).toBe(Math.floor(before / 2));
    expect(await node2.pttl(`${p}lock:r`)).toBeLessThanOrEqual(after);
    expect(await node2.get(`${p}lock:r`)).toBe(value);
    // Another token, or a token the value merely starts with, does not hold the key.
    expect(await env.scenario.shortenTtl(2, `${p}lock:r`, 'tok-other', 100)).toEqual({ before: -1, after: -1 });
    expect(await env.scenario.shortenTtl(2, `${p}lock:r`, 'tok', 100)).toEqual({ before: -1, after: -1 });
    expect(await node2.pttl(`${p}lock:r`)).toBeGreaterThan(after / 2);
    // A bare token holds the key too.
    await node2.set(`${p}lock:bare`, 'tok-bare', 'PX', 20_000);
    expect((await env.scenario.shortenTtl(2, `${p}lock:bare`, 'tok-bare', 100)).after).toBeLessThan(10_001);
    expect(await env.scenario.shortenTtl(2, `${p}lock:missing`, 'tok-bare', 100)).toEqual({ before: -1, after: -1 });
  });

  it("warming up a restarted node loads the lock core's scripts but never the probe, so a successful fast probe still proves a check ran there", async () => {
    const node3 = env.scenario.directClient(3);
    await node3.script('FLUSH');
    await env.scenario.warmUp([3]);
    const others = ALL_SCRIPTS.filter((s) => s !== PROBE_SCRIPT);
    expect(await node3.script('EXISTS', ...others.map((s) => s.sha))).toEqual(others.map(() => 1));
    expect(await node3.script('EXISTS', PROBE_SCRIPT.sha)).toEqual([0]);
  });
});

describe('scenarios end to end on five real nodes', () => {
  it("9 restart from an old snapshot: detection off gives B the lock A holds (two holders, B's fence not above A's); detection on refuses C until node c sat out its restart", async () => {
    const view = await runToEnd('restart-from-snapshot', 9);
    expect(view.error).toBeNull();
    expect(view.status).toBe('done');
    const attempt = (id: string) => view.timeline.attempts.find((a) => a.id === id)!;
    const c = Number(view.steps.find((s) => s.id === 'off-crash')!.result!.match(/node (\d)/)![1]);
    expect(view.clients.find((x) => x.name === 'B')).toMatchObject({ unsafe: true, unsafeSetting: 'node checks off' });

    // Phase 1: A holds on a bare majority that includes c; c comes back from its snapshot and votes for B.
    const aOff = attempt('off-holder-acquires');
    expect(aOff.outcome).toBe('granted');
    expect(aOff.votes.filter((v) => v.vote === 'for').map((v) => v.node)).toContain(c);
    expect(aOff.votes.filter((v) => v.vote === 'for')).toHaveLength(3);
    // The timeline shows A's key on node c until the crash (the nodes are read as a crash begins).
    const crashAt = view.steps.find((s) => s.id === 'off-crash')!.endedAt!;
    expect(
      view.timeline.keys.filter((k) => k.node === c && k.client === 'A' && k.resource === 'detection-off/ledger' && k.from <= crashAt),
    ).toHaveLength(1);
    const bOff = attempt('off-asker-asks');
    expect(bOff.outcome).toBe('granted');
    expect(bOff.votes.find((v) => v.node === c)).toMatchObject({ vote: 'for' });
    const off = view.checker.resources.find((r) => r.resource === 'detection-off/ledger')!;
    expect(off.ok).toBe(false);
    expect(off.overlaps[0]).toMatchObject({ clients: expect.arrayContaining(['A', 'B']), bothValid: true });
    expect(bOff.fence!).toBeLessThanOrEqual(aOff.fence!);
    expect(view.facts.find((f) => f.id === 'fences-off')!.value).toContain('not above');
    // B's fence is not above A's, so the fenced store cannot stop A: A's later write is accepted when
    // B's fence is below, and refused as a tie when they are equal (two holders with one fence, a
    // failure the store reports: lib/scenarios/registers.ts).
    const tie = bOff.fence === aOff.fence;
    expect(view.timeline.writes.map((w) => [w.client, w.fenced])).toEqual([
      ['B', 'accepted'],
      ['A', tie ? 'rejected' : 'accepted'],
    ]);
    expect(view.timeline.quarantines.filter((q) => q.from < attempt('on-holder-acquires').from)).toEqual([]);
    // The timeline shows node c's fence register going back with the old snapshot.
    const cFences = view.timeline.fences.filter((f) => f.node === c && f.at < attempt('on-holder-acquires').from).map((f) => f.value);
    expect(
      cFences.some((v, i) => i > 0 && v < cFences[i - 1]!),
      JSON.stringify(cFences),
    ).toBe(true);
    expect(view.steps.find((s) => s.id === 'clean')!.result).toContain('one at a time');

    // Phase 2: the same restart is detected; c sits out maxTtlMs from its process start.
    const aOn = attempt('on-holder-acquires');
    expect(aOn.outcome).toBe('granted');
    const cRefused = attempt('on-asker-asks');
    // Refused (the class the core names depends on which votes it counted), node c's vote among the reasons.
    expect(['LockContendedError', 'QuorumUnavailableError']).toContain(cRefused.outcome);
    expect(cRefused.votes.find((v) => v.node === c)).toMatchObject({ vote: 'against', reason: 'quarantined' });
    expect(cRefused.votes.filter((v) => v.vote === 'for').length).toBeLessThan(3);
    const quarantine = view.timeline.quarantines.find((q) => q.node === c)!;
    expect(quarantine).toMatchObject({ cause: 'restart', open: false });
    expect(quarantine.from).toBeGreaterThanOrEqual(cRefused.from);
    expect(view.facts.find((f) => f.id === 'sat-out')!.value).toMatch(/^\d\.\d\d s$/);
    const cGranted = attempt('on-c-acquires');
    expect(cGranted.outcome).toBe('granted');
    expect(cGranted.from).toBeGreaterThanOrEqual(quarantine.to - 150);
    const aBelief = view.timeline.beliefs.find((b) => b.client === 'A' && b.resource === 'detection-on/ledger')!;
    expect(cGranted.to!).toBeGreaterThanOrEqual(aBelief.validUntil);
    expect(cGranted.votes.find((v) => v.node === c)!.reason).not.toBe('quarantined');
    expect(cGranted.fence!).toBeGreaterThan(aOn.fence!);
    expect(view.facts.find((f) => f.id === 'fences-on')!.value).toContain("C's fence is above A's");
    expect(view.checker.resources.find((r) => r.resource === 'detection-on/ledger')!.ok).toBe(true);
    expect(view.predictions.map((p) => [p.id, p.actual])).toEqual([
      ['p-off', 'granted'],
      ['p-on', cRefused.outcome],
    ]);

    // Put back: every node up on aof-always, nothing left under the run's prefix.
    expect(view.restore).toMatchObject({ done: true, error: null });
    expect(view.restore!.actions).toContain(`restarted node ${c} with aof-always (was rdb)`);
    const statuses = await env.control.nodes();
    expect(statuses.map((n) => `${n.state}/${n.persistence}`)).toEqual(Array(5).fill('up/aof-always'));
    for (let id = 1; id <= 5; id++) expect(await env.scenario.directClient(id).keys(`${view.prefix}*`)).toEqual([]);
    // Nor in node c's snapshot: restarted into rdb again, it loads no key of the run.
    await env.control.act(c, { action: 'restart', persistence: 'rdb' });
    await env.scenario.whenReadable(5_000);
    expect(await env.scenario.directClient(c).keys(`${view.prefix}*`)).toEqual([]);
    await env.control.act(c, { action: 'restart', persistence: 'aof-always' });
  }, 120_000);

  it("10 delayed after the grant: A's write keeps the fence A held when it sent it, lands after B's, and only the fenced store refuses it; nobody believed at once", async () => {
    const view = await runToEnd('delayed-write', 10);
    expect(view.error).toBeNull();
    expect(view.status).toBe('done');
    const attempt = (id: string) => view.timeline.attempts.find((a) => a.id === id)!;
    const a = attempt('a-acquires');
    const b = attempt('b-acquires');
    expect([a.outcome, b.outcome]).toEqual(['granted', 'granted']);
    expect(b.fence!).toBeGreaterThan(a.fence!);
    // Sent inside A's validity, delivered after B's write, with A's fence of the time.
    const aBelief = view.timeline.beliefs.find((x) => x.client === 'A')!;
    const sent = view.timeline.markers.find((m) => m.kind === 'send' && m.client === 'A')!;
    expect(sent.t).toBeLessThan(aBelief.validUntil);
    expect(aBelief.to!).toBeLessThanOrEqual(b.to!);
    expect(view.timeline.writes.map((w) => [w.client, w.fence, w.unfenced, w.fenced])).toEqual([
      ['B', b.fence, 'accepted', 'accepted'],
      ['A', a.fence, 'accepted', 'rejected'],
    ]);
    expect(view.timeline.writes[1]!.t - sent.t).toBeGreaterThan(aBelief.validUntil - sent.t);
    expect(view.checker.ok).toBe(true);
    expect(view.predictions.map((p) => [p.id, p.actual])).toEqual([
      ['p-plain', 'no'],
      ['p-fenced', 'yes'],
    ]);
    expect(view.restore).toMatchObject({ done: true, error: null });
    for (let id = 1; id <= 5; id++) expect(await env.scenario.directClient(id).keys(`${view.prefix}*`)).toEqual([]);
  }, 60_000);

  it('11 do you need Redlock: the single-instance client votes on node 1 only (named node 1), both costs are measured; node 1 down refuses it and not Redlock', async () => {
    const view = await runToEnd('efficiency-vs-correctness', 11);
    expect(view.error).toBeNull();
    expect(view.status).toBe('done');
    const attempt = (id: string) => view.timeline.attempts.find((a) => a.id === id)!;
    for (const who of ['S', 'R'])
      expect(view.facts.find((f) => f.id === `cost-${who}`)!.value).toMatch(/^[\d.]+ ms \([\d.]+ ms–[\d.]+ ms\)$/);
    const s = attempt('s-asks');
    expect(s.outcome).toBe('QuorumUnavailableError');
    // One vote, node 1's: S asks no other node.
    expect(s.votes).toHaveLength(1);
    expect(s.votes[0]).toMatchObject({ node: 1, vote: 'against' });
    const r = attempt('r-asks');
    expect(r.outcome).toBe('granted');
    expect(r.votes.map((v) => v.node).sort()).toEqual([1, 2, 3, 4, 5]);
    expect(r.votes.find((v) => v.node === 1)).toMatchObject({ vote: 'against' });
    expect(view.predictions.map((p) => [p.id, p.actual])).toEqual([
      ['p-single', 'refused'],
      ['p-redlock', 'granted'],
    ]);
    expect(view.restore).toMatchObject({ done: true, error: null });
    const statuses = await env.control.nodes();
    expect(statuses.map((n) => n.state)).toEqual(Array(5).fill('up'));
    for (let id = 1; id <= 5; id++) expect(await env.scenario.directClient(id).keys(`${view.prefix}*`)).toEqual([]);
  }, 60_000);
});
