import { expect } from '@playwright/test';
import { markNodeClean, readEpoch } from '@redlock-console/redlock';
import { Redis } from 'ioredis';
import type { NodeStatus } from '../../lib/cluster/supervisor';
import { E2E_MAX_TTL_MS } from '../../playwright.config';
import { test as base } from './console';
import { sandbox } from './sandbox';

/**
 * Every spec's `test`, on its worker's own console (./console.ts): after each test, the five sandbox
 * masters are put back to the suite's baseline (up, healed, AOF always, a clean epoch sentinel) if
 * the test left them otherwise.
 *
 * Tests restore what they break in their own `finally`, but a test that times out (a slow CI
 * machine) or fails inside that `finally` leaves nodes behind, and every later test then fails for
 * a reason that is not its own (one such run failed twelve tests). The repair runs in a fixture
 * with a timeout of its own, so it still runs when the test used up its time; it is recorded as
 * an annotation on the test, so a test that forgets to restore is still visible in the report.
 */
const KEY_PREFIX = 'rl:';

function atBaseline(node: NodeStatus): boolean {
  return (
    node.state === 'up' &&
    (node.fault === null || node.fault.kind === 'pass') &&
    node.persistence === 'aof-always' &&
    node.restartAt === null
  );
}

/** Put one node back: healed, running with AOF always, its epoch sentinel present and not quarantined. Returns what was done. */
export async function repairNode(node: NodeStatus): Promise<string[]> {
  const control = sandbox();
  const done: string[] = [];
  if (node.fault !== null && node.fault.kind !== 'pass') {
    await control.act(node.id, { action: 'heal' });
    done.push('healed');
  }
  if (node.state !== 'up' || node.persistence !== 'aof-always' || node.restartAt !== null) {
    await control.act(node.id, { action: 'restart', persistence: 'aof-always' });
    done.push(`restarted (was ${node.state}, ${node.persistence})`);
  }
  const [fresh] = (await control.nodes()).filter((n) => n.id === node.id);
  const direct = new Redis(fresh!.directUrl, { lazyConnect: true, maxRetriesPerRequest: 1, enableOfflineQueue: false });
  direct.on('error', () => undefined);
  try {
    await direct.connect();
    const epoch = await readEpoch(direct, KEY_PREFIX);
    const [seconds] = await direct.time();
    const runId = /run_id:(\w+)/.exec(await direct.info('server'))?.[1];
    // No sentinel, a quarantine still running, or one that speaks for an earlier process (a restart the core would quarantine).
    const why = !epoch
      ? 'no sentinel'
      : epoch.quarantineUntil > Number(seconds) * 1000
        ? 'quarantined'
        : epoch.runId !== undefined && epoch.runId !== runId
          ? 'sentinel of an earlier process'
          : null;
    if (why) {
      await markNodeClean(direct, { keyPrefix: KEY_PREFIX, maxTtlMs: E2E_MAX_TTL_MS, origin: 'e2e baseline after a test' });
      done.push(`marked clean (${why})`);
    }
  } finally {
    direct.disconnect();
  }
  return done;
}

export const test = base.extend<{ clusterBaseline: void }>({
  clusterBaseline: [
    async ({}, use, testInfo) => {
      await use();
      const repairs: string[] = [];
      for (const node of await sandbox().nodes()) {
        const done = await repairNode(node);
        if (done.length > 0 || !atBaseline(node)) repairs.push(`node ${node.id}: ${done.join(', ') || 'checked'}`);
      }
      if (repairs.length > 0) testInfo.annotations.push({ type: 'cluster baseline restored', description: repairs.join('; ') });
    },
    { auto: true, timeout: 120_000, title: 'sandbox cluster back to its baseline' },
  ],
});

export { expect };
