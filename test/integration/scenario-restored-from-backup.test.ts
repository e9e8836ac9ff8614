import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { backUp, dropBackup, restoreInPlace } from '@/lib/scenarios/backup';
import { readEpoch } from '@redlock-console/redlock';
import { uniquePrefix } from '../support/cluster';
import { scenarioNodes } from '../support/scenario-nodes';

/**
 * Scenario 12 on five real redis-servers: the backup and its restore in place (SWAPDB
 * with the node's spare database, only the run's keys going back in time), and the whole scenario
 * end to end — the node checks find the rollback and refuse B; with them off C is granted while A
 * holds.
 */

const env = scenarioNodes();
const { runToEnd } = env;

/** A connection to node `node`'s spare database (database 1). */
async function spareOf(node: number): Promise<Redis> {
  const spare = new Redis(env.scenario.addresses[node - 1]!.directUrl, { db: 1, lazyConnect: true, maxRetriesPerRequest: 1 });
  await spare.connect();
  return spare;
}

const spareKeys = async (node: number): Promise<string[]> => {
  const spare = await spareOf(node);
  try {
    return (await spare.keys('*')).sort();
  } finally {
    spare.disconnect();
  }
};

describe('a backup restored in place (SWAPDB with the spare database)', () => {
  it("takes the run's keys back to the backup and leaves every other key, with its TTL, as it is now", async () => {
    const run = uniquePrefix('scn-backup');
    const other = uniquePrefix('scn-other');
    const node = env.scenario.directClient(2);
    await node.set(`${run}epoch`, 'old');
    await node.set(`${run}anchor`, '1');
    await node.set(`${other}kept`, 'before', 'PX', 60_000);
    expect(await backUp(node, run)).toBe(2);
    expect(await spareKeys(2)).toEqual([`${run}anchor`, `${run}epoch`]);
    // After the backup: the run's keys move on, and so does everyone else's.
    await node.set(`${run}epoch`, 'new');
    await node.set(`${run}lock:ledger`, 'token', 'PX', 30_000);
    await node.set(`${other}kept`, 'after', 'PX', 60_000);
    await node.set(`${other}added`, 'later');
    const runIdBefore = /run_id:(\w+)/.exec(await node.info('server'))![1];

    const outcome = await restoreInPlace(node, run);
    expect(outcome).toMatchObject({ restored: 2, lost: ['lock:ledger'] });
    expect(outcome.kept).toBeGreaterThanOrEqual(2);
    expect(await node.get(`${run}epoch`)).toBe('old');
    expect(await node.exists(`${run}lock:ledger`)).toBe(0);
    expect(await node.get(`${other}kept`)).toBe('after');
    expect(await node.pttl(`${other}kept`)).toBeGreaterThan(50_000);
    expect(await node.get(`${other}added`)).toBe('later');
    // The same process, which counted the swap; the spare database is empty again.
    expect(/run_id:(\w+)/.exec(await node.info('server'))![1]).toBe(runIdBefore);
    expect(await node.info('commandstats')).toMatch(/cmdstat_swapdb:calls=[1-9]/);
    expect(await spareKeys(2)).toEqual([]);
    await node.del(`${run}epoch`, `${run}anchor`, `${other}kept`, `${other}added`);
  });

  it("never writes over a spare database holding someone else's keys, nor restores without a backup", async () => {
    const run = uniquePrefix('scn-backup-busy');
    const node = env.scenario.directClient(4);
    await expect(restoreInPlace(node, run)).rejects.toThrow(/no backup/);
    const spare = await spareOf(4);
    try {
      await spare.set('someone-else', 'theirs');
      await node.set(`${run}epoch`, 'x');
      await expect(backUp(node, run)).rejects.toThrow(/not this run's/);
      await expect(restoreInPlace(node, run)).rejects.toThrow(/not this run's/);
      expect(await spare.get('someone-else')).toBe('theirs');
      expect(await node.get(`${run}epoch`)).toBe('x');
    } finally {
      await spare.del('someone-else');
      spare.disconnect();
      await node.del(`${run}epoch`);
    }
    // A backup never restored is deleted from the spare database.
    await node.set(`${run}epoch`, 'y');
    expect(await backUp(node, run)).toBe(1);
    expect(await dropBackup(node, run)).toBe(1);
    expect(await spareKeys(4)).toEqual([]);
    await node.del(`${run}epoch`);
  });
});

describe('12 restored from a backup while running, end to end', () => {
  it('node checks on: B refused, node c quarantined for a rollback, B granted above A afterwards; off: C granted while A holds, fence not above', async () => {
    const view = await runToEnd('restored-from-backup', 12);
    expect(view.error).toBeNull();
    expect(view.status).toBe('done');
    const attempt = (id: string) => view.timeline.attempts.find((a) => a.id === id)!;
    const c = Number(view.steps.find((s) => s.id === 'on-restore')!.result!.match(/^node (\d)/)![1]);
    expect(view.clients.find((x) => x.name === 'C')).toMatchObject({ unsafe: true, unsafeSetting: 'node checks off' });
    expect(view.clients.find((x) => x.name === 'B')).toMatchObject({ unsafe: false });

    // Phase 1: A on a bare majority with node c; node c restored in place loses A's key (no restart).
    const aOn = attempt('on-a-acquires');
    expect(aOn.outcome).toBe('granted');
    expect(aOn.votes.filter((v) => v.vote === 'for').map((v) => v.node)).toContain(c);
    expect(aOn.votes.filter((v) => v.vote === 'for')).toHaveLength(3);
    expect(view.steps.find((s) => s.id === 'on-restore')!.result).toMatch(/gone: lock:detection-on\/ledger/);
    expect(view.timeline.markers.filter((m) => m.node === c && (m.kind === 'crash' || m.kind === 'restart' || m.kind === 'start'))).toEqual(
      [],
    );
    const bRefused = attempt('on-b-asks');
    expect(['LockContendedError', 'QuorumUnavailableError']).toContain(bRefused.outcome);
    expect(bRefused.votes.find((v) => v.node === c)).toMatchObject({ vote: 'against', reason: 'quarantined' });
    expect(bRefused.votes.filter((v) => v.vote === 'for').length).toBeLessThan(3);
    const quarantine = view.timeline.quarantines.find((q) => q.node === c)!;
    expect(quarantine).toMatchObject({ cause: 'rollback', open: false });
    expect(view.timeline.quarantines.filter((q) => q.node !== c)).toEqual([]);
    expect(view.facts.find((f) => f.id === 'sat-out')!.value).toMatch(/^\d\.\d\d s$/);
    const bGranted = attempt('on-b-acquires');
    expect(bGranted.outcome).toBe('granted');
    expect(bGranted.fence!).toBeGreaterThan(aOn.fence!);
    expect(view.checker.resources.find((r) => r.resource === 'detection-on/ledger')!.ok).toBe(true);

    // Phase 2: node checks off: node c's vote counts for C while A holds.
    const aOff = attempt('off-a-acquires');
    expect(aOff.outcome).toBe('granted');
    const cOff = attempt('off-c-asks');
    expect(cOff.outcome).toBe('granted');
    expect(cOff.votes.find((v) => v.node === c)).toMatchObject({ vote: 'for' });
    const off = view.checker.resources.find((r) => r.resource === 'detection-off/ledger')!;
    expect(off.ok).toBe(false);
    expect(off.overlaps[0]).toMatchObject({ clients: expect.arrayContaining(['A', 'C']), bothValid: true });
    expect(cOff.fence!).toBeLessThanOrEqual(aOff.fence!);
    expect(view.facts.find((f) => f.id === 'fences-off')!.value).toContain('not above');
    expect(view.predictions.map((p) => [p.id, p.actual])).toEqual([
      ['p-on', 'refused'],
      ['p-off', 'granted'],
    ]);

    // Put back: nothing of the run left, in the live database or the spare one; node c never restarted.
    expect(view.restore).toMatchObject({ done: true, error: null });
    for (let id = 1; id <= 5; id++) {
      expect(await env.scenario.directClient(id).keys(`${view.prefix}*`)).toEqual([]);
      expect(await spareKeys(id)).toEqual([]);
    }
  }, 90_000);

  it('a run cancelled after the backup leaves no key of the run in the spare database', async () => {
    const view = await runToEnd('restored-from-backup', 5, 'on-backup');
    expect(view.status).toBe('cancelled');
    expect(view.restore).toMatchObject({ done: true, error: null });
    for (let id = 1; id <= 5; id++) {
      expect(await env.scenario.directClient(id).keys(`${view.prefix}*`)).toEqual([]);
      expect(await spareKeys(id)).toEqual([]);
    }
    // Its sentinel went with the rest of the run's keys.
    expect(await readEpoch(env.scenario.directClient(1), view.prefix)).toBeNull();
  }, 60_000);
});
