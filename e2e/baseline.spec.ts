import { lockKey } from '@redlock-console/redlock';
import { Redis } from 'ioredis';
import { acquire, AS_CLIENT } from './support/ops';
import { signIn } from './support/login';
import { sandbox } from './support/sandbox';
import { expect, test } from './support/test';

/**
 * The suite's own safety net (support/test.ts): a test that leaves the sandbox broken — it timed
 * out, or failed inside its own cleanup — must not fail the tests after it. The first test breaks
 * the cluster on purpose and does not clean up; the second finds it whole again.
 */
test.describe.serial('every test starts on the baseline cluster', () => {
  test('a test that leaves nodes partitioned, down and restarted empty (no cleanup of its own)', async () => {
    test.slow();
    const control = sandbox();
    await control.act(2, { action: 'restart', persistence: 'none' });
    await control.act(3, { action: 'partition' });
    await control.act(4, { action: 'stop' });
    const nodes = await control.nodes();
    expect(nodes.map((n) => `${n.state}/${n.fault?.kind ?? 'none'}/${n.persistence}`)).toEqual([
      'up/pass/aof-always',
      'up/pass/none',
      'up/blackhole/aof-always',
      'down/pass/aof-always',
      'up/pass/aof-always',
    ]);
  });

  test('the next test finds every node up, healed, on AOF always, and voting: every master takes the next lock', async ({ page }) => {
    await signIn(page);
    const body = (await (await page.request.get('/api/nodes')).json()) as {
      nodes: Array<{ up: boolean; process: string; fault: string | null; persistence: string }>;
    };
    expect(body.nodes.map((n) => `${n.up}/${n.process}/${n.fault}/${n.persistence}`)).toEqual(Array(5).fill('true/up/pass/aof-always'));
    const resource = `e2e-baseline-${Date.now()}`;
    const answer = await acquire(page, resource);
    expect(answer.status()).toBe(200);
    const lock = (await answer.json()) as { token: string; resources: string[] };
    // The grant answers at a majority; the other votes land just after. Every master must take the key.
    const nodes = await sandbox().nodes();
    await expect
      .poll(async () => {
        const held: number[] = [];
        for (const node of nodes) {
          const direct = new Redis(node.directUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
          try {
            await direct.connect();
            if ((await direct.exists(lockKey('rl:', resource))) === 1) held.push(node.id);
          } finally {
            direct.disconnect();
          }
        }
        return held;
      })
      .toEqual([1, 2, 3, 4, 5]);
    const released = await page.request.post(`/api/locks/${encodeURIComponent(lock.resources[0]!)}/release`, {
      headers: AS_CLIENT,
      data: { token: lock.token },
    });
    expect(released.status()).toBe(200);
  });
});
