import { Redis } from 'ioredis';
import { lockKey } from '@redlock-console/redlock';
import { expect, test } from './support/test';
import { expectAxeClean } from './support/axe';
import { signIn } from './support/login';
import { acquire, AS_CLIENT } from './support/ops';
import { sandbox } from './support/sandbox';
import { saveScreens } from './support/screens';
import { deleteLocks, randomToken, seedLocks } from './support/seed-locks';

const ALL = [1, 2, 3, 4, 5];

/** How many nodes still hold a key for each resource. */
async function holders(resources: readonly string[]): Promise<number[]> {
  const nodes = await sandbox().nodes();
  const clients = nodes.map((n) => new Redis(n.url, { maxRetriesPerRequest: 1 }));
  try {
    return await Promise.all(
      resources.map(async (r) => (await Promise.all(clients.map((c) => c.exists(lockKey('rl:', r))))).reduce((a, b) => a + b, 0)),
    );
  } finally {
    clients.forEach((c) => c.disconnect());
  }
}

test.describe('bulk force-release: one preview, one reason, one confirmation, a result per lock', () => {
  test("a split lock's every token, from its detail page", async ({ page }) => {
    const resource = `e2e-bulk-split-${Date.now().toString(36)}`;
    const [a, b] = [randomToken(), randomToken()];
    await seedLocks([
      { resource, token: a, ttlMs: 60_000, nodes: [1, 2], meta: { owner: 'worker-a' } },
      { resource, token: b, ttlMs: 60_000, nodes: [3, 4], meta: { owner: 'worker-b' } },
    ]);
    try {
      await signIn(page);
      await page.goto(`/locks/${encodeURIComponent(resource)}`);
      await expect(page.getByTestId('lock-detail')).toHaveAttribute('data-state', 'split');
      await page.getByRole('button', { name: 'Release all 2 tokens…' }).click();
      const dialog = page.getByTestId('bulk-release-dialog');
      const rows = dialog.getByTestId('bulk-release-row');
      await expect(rows).toHaveCount(2);
      await expect(rows.nth(0)).toContainText('will delete on 2 of 5');
      await expect(rows.nth(1)).toContainText('will delete on 2 of 5');
      const confirm = dialog.getByTestId('bulk-release-confirm');
      await dialog.getByLabel(/Reason/).fill('e2e: both holders are gone');
      await expect(confirm).toBeDisabled();
      await dialog.getByLabel(/to confirm/).fill('2');
      await expectAxeClean(page);
      await saveScreens(page, 'bulk-release-split');
      await confirm.click();
      await expect(dialog.getByTestId('bulk-release-summary')).toContainText('Deleted 4 keys over 2 of 2 tokens');
      await expect(rows.nth(0)).toContainText('deleted on 2 of 5');
      expect(await holders([resource])).toEqual([0]);
    } finally {
      await deleteLocks([resource]);
    }
  });

  test('pick one lock, then every lock matching the filter, and release them all; a lock outside the filter stays', async ({ page }) => {
    const run = Date.now().toString(36);
    const picked = [0, 1, 2].map((i) => `e2e-bulk-${run}-held-${i}`);
    const outside = `e2e-bulk-${run}-other`;
    await seedLocks(
      [...picked, outside].map((resource) => ({ resource, token: randomToken(), ttlMs: 60_000, nodes: ALL, meta: { owner: 'batch' } })),
    );
    try {
      await signIn(page);
      await page.goto(`/locks?prefix=${encodeURIComponent(`e2e-bulk-${run}-held-`)}`);
      const rows = page.getByTestId('lock-row');
      await expect(rows).toHaveCount(3);
      await rows.first().getByRole('checkbox').check();
      const bar = page.getByTestId('selection-bar');
      await expect(bar.getByTestId('selection-count')).toHaveText('1');
      // Everything the filter matches, not only what is loaded on screen.
      await bar.getByRole('button', { name: 'Select all 3 matching' }).click();
      await expect(bar.getByTestId('selection-count')).toHaveText('3');
      for (const box of await page.getByTestId('lock-select').all()) await expect(box).toBeChecked();
      await expectAxeClean(page);
      await bar.getByRole('button', { name: 'Force-release 3…' }).click();

      const dialog = page.getByTestId('bulk-release-dialog');
      await expect(dialog.getByTestId('bulk-release-row')).toHaveCount(3);
      await expect(dialog.getByTestId('bulk-release-verdict')).toContainText('All 3 will delete keys');
      await dialog.getByLabel(/Reason/).fill('e2e: batch job crashed holding its locks');
      await dialog.getByLabel(/to confirm/).fill('3');
      await dialog.getByTestId('bulk-release-confirm').click();
      await expect(dialog.getByTestId('bulk-release-summary')).toContainText('Deleted 15 keys over 3 of 3 tokens');
      await dialog.getByRole('button', { name: 'Done' }).click();
      await expect(bar).toBeHidden();
      // The opener left with the selection: focus goes to the screen's heading, not to <body>.
      await expect(page.getByRole('heading', { level: 1, name: 'Locks' })).toBeFocused();
      expect(await holders([...picked, outside])).toEqual([0, 0, 0, 5]);

      // Each lock has its own audit entry, naming the batch.
      await page.goto('/audit?action=lock.force-release');
      for (const resource of picked) await expect(page.getByTestId('audit-table')).toContainText(resource);
    } finally {
      await deleteLocks([...picked, outside]);
    }
  });

  test('a viewer sees no selection boxes and no bulk button', async ({ page }) => {
    const resource = `e2e-bulk-viewer-${Date.now().toString(36)}`;
    await seedLocks([{ resource, token: randomToken(), ttlMs: 60_000, nodes: ALL }]);
    try {
      await signIn(page, 'viewer');
      await page.goto(`/locks?prefix=${encodeURIComponent(resource)}`);
      await expect(page.getByTestId('lock-row')).toHaveCount(1);
      await expect(page.getByTestId('lock-select')).toHaveCount(0);
      await expect(page.getByTestId('select-all-loaded')).toHaveCount(0);
    } finally {
      await deleteLocks([resource]);
    }
  });

  test('a live holder in the batch: the dialog names it and the release waits for the operator to say they saw it', async ({ page }) => {
    const resource = `e2e-bulk-live-${Date.now().toString(36)}`;
    await signIn(page);
    const taken = await acquire(page, resource, 4_000);
    expect(taken.status()).toBe(200);
    const { token } = (await taken.json()) as { token: string };
    // The holder: a client of the lock service extending every 500 ms (its keys count the extensions).
    let stop = false;
    const extends_: number[] = [];
    const holder = (async () => {
      while (!stop) {
        const res = await page.request.post(`/api/locks/${encodeURIComponent(resource)}/extend`, {
          headers: AS_CLIENT,
          data: { token, ttlMs: 4_000 },
        });
        extends_.push(res.status());
        // work: the holder extends every 500 ms
        await new Promise((r) => setTimeout(r, 500));
      }
    })();
    try {
      await expect.poll(() => extends_.filter((s) => s === 200).length, { timeout: 15_000 }).toBeGreaterThanOrEqual(3);
      await page.goto(`/locks?prefix=${encodeURIComponent(resource)}`);
      const rows = page.getByTestId('lock-row');
      await expect(rows).toHaveCount(1);
      await rows.first().getByRole('checkbox').check();
      await page.getByTestId('selection-bar').getByRole('button', { name: 'Force-release 1…' }).click();
      const dialog = page.getByTestId('bulk-release-dialog');
      await expect(dialog.getByTestId('bulk-live-holders')).toContainText(`1 of these holders is alive`);
      await expect(dialog.getByTestId('bulk-live-holders')).toContainText(resource);
      const confirm = dialog.getByTestId('bulk-release-confirm');
      await dialog.getByLabel(/Reason/).fill('e2e: the holder is wedged in a loop');
      await dialog.getByLabel(/to confirm/).fill('1');
      // Reason and count given, the live holder not acknowledged: not yet.
      await expect(confirm).toBeDisabled();
      await expectAxeClean(page);
      await dialog.getByTestId('bulk-confirm-live').check();
      await expect(confirm).toBeEnabled();
      await confirm.click();
      await expect(dialog.getByTestId('bulk-release-summary')).toContainText('Deleted 5 keys over 1 of 1 tokens');
      // The holder learns it at its next extend.
      const before = extends_.length;
      await expect.poll(() => extends_.slice(before).some((s) => s !== 200), { timeout: 10_000 }).toBe(true);
      expect(await holders([resource])).toEqual([0]);
    } finally {
      stop = true;
      await holder;
      await deleteLocks([resource]);
    }
  });
});
