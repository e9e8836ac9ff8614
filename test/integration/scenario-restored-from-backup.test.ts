import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterControl } from '@/lib/scenarios';
import { backUp, dropBackup, restoreInPlace } from '@/lib/scenarios/backup';
import { ScenarioCluster } from '@/lib/scenarios/cluster';
import { startTestCluster, uniquePrefix, type TestCluster } from '../support/cluster';

/**
 * Scenario 12 (issue 37) on five real redis-servers: the backup and its restore in place (SWAPDB
 * with the node's spare database, only the run's keys going back in time).
 */

let cluster: TestCluster;
let control: ClusterControl;
let scenario: ScenarioCluster;

beforeAll(async () => {
  cluster = await startTestCluster({ nodes: 5, persistence: 'aof-always' });
  const supervisor = cluster.supervisor;
  control = { nodes: async () => supervisor.nodes(), act: (id, action) => supervisor.act(id, action) };
  scenario = await ScenarioCluster.open(control);
  await scenario.whenReadable(5_000);
});
afterAll(async () => {
  scenario?.close();
  await cluster?.stop();
});

/** A connection to node `node`'s spare database (database 1). */
async function spareOf(node: number): Promise<Redis> {
  const spare = new Redis(scenario.addresses[node - 1]!.directUrl, { db: 1, lazyConnect: true, maxRetriesPerRequest: 1 });
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
    const node = scenario.directClient(2);
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
    const node = scenario.directClient(4);
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
