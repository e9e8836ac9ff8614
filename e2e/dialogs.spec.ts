import { expect, test } from './support/test';
import { expectAxeClean } from './support/axe';
import { signIn } from './support/login';
import { restoreNode } from './support/ops';
import { sandbox } from './support/sandbox';
import { saveScreens } from './support/screens';
import { deleteLocks, deleteRawKeys, randomToken, seedLocks, seedRawKeys } from './support/seed-locks';

/**
 * Every dialog and panel that opens over a screen, axe-clean in both themes while it is open, and
 * closed by Escape with focus back on what opened it. (The action, mark-clean and bulk dialogs are
 * checked in their own flows: nodes.spec.ts, bulk-release.spec.ts.) And the copy buttons: a value
 * goes to the clipboard whole, whatever the screen shows of it.
 */
test.describe('dialogs: accessible while open, closed from the keyboard', () => {
  test.beforeEach(async ({ page }) => {
    await signIn(page);
  });

  test('keyboard shortcuts (?)', async ({ page }) => {
    await page.goto('/');
    await expect(page.getByTestId('cluster-banner')).toBeVisible();
    await page.keyboard.press('?');
    const dialog = page.getByTestId('shortcuts-dialog');
    await expect(dialog).toBeVisible();
    await expectAxeClean(page);
    await page.keyboard.press('Escape');
    await expect(dialog).toBeHidden();
  });

  test('force-release, from the lock detail', async ({ page }) => {
    const resource = `e2e-dialog-fr-${Date.now().toString(36)}`;
    // Written directly with a minute to live: a grant (5 s ceiling here) would expire during the axe passes.
    await seedLocks([{ resource, token: randomToken(), ttlMs: 60_000, nodes: [1, 2, 3, 4, 5] }]);
    await page.goto(`/locks/${encodeURIComponent(resource)}`);
    const open = page.getByTestId('force-release-button');
    await open.click();
    const dialog = page.getByTestId('force-release-dialog');
    await expect(dialog.getByTestId('force-release-verdict')).toContainText('Will delete the key on 5 of 5 nodes');
    await expectAxeClean(page);
    await saveScreens(page, 'dialog-force-release');
    await page.keyboard.press('Escape');
    await expect(dialog).toBeHidden();
    await expect(open).toBeFocused();
    await deleteLocks([resource]);
  });

  test("a node's safety details, from the overview", async ({ page }) => {
    // A node back without persistence has safety reasons to show (no epoch sentinel, no persistence).
    await sandbox().act(3, { action: 'restart', persistence: 'none' });
    try {
      await page.goto('/');
      const more = page.getByTestId('node-verdict-3').getByRole('button');
      await more.click();
      const dialog = page.getByRole('dialog', { name: /^Node 3:/ });
      await expect(dialog).toBeVisible();
      await expectAxeClean(page);
      await page.keyboard.press('Escape');
      await expect(dialog).toBeHidden();
      await expect(more).toBeFocused();
    } finally {
      await restoreNode(page, 3);
    }
  });

  test("the key inspector, for another library's key", async ({ page }) => {
    const key = `e2e-dialog-foreign-${Date.now().toString(36)}:job:1`;
    await seedRawKeys([{ key, value: randomToken(), ttlMs: 60_000, nodes: [1, 2, 3, 4, 5] }]);
    try {
      await page.goto(`/locks?pattern=${encodeURIComponent(key)}`);
      await page.locator(`[data-testid="lock-row"][data-resource="${key}"]`).getByRole('button', { name: key }).click();
      await expect(page.getByTestId('key-inspector')).toBeVisible();
      await expectAxeClean(page);
    } finally {
      await deleteRawKeys([key]);
    }
  });

  test('a token, a fence and a resource copy with a click, whole', async ({ page, context }) => {
    await context.grantPermissions(['clipboard-read', 'clipboard-write']);
    const resource = `e2e-copy-${Date.now().toString(36)}`;
    const token = randomToken();
    await seedLocks([{ resource, token, ttlMs: 60_000, nodes: [1, 2, 3, 4, 5], meta: { fence: '1795749819839002' } }]);
    const clipboard = () => page.evaluate(() => navigator.clipboard.readText());
    try {
      await page.goto(`/locks?prefix=${encodeURIComponent(resource)}`);
      const chip = page.locator(`[data-testid="lock-row"][data-resource="${resource}"] [data-testid="lock-cell"][data-node="1"] button`);
      await chip.click();
      await expect.poll(clipboard).toBe(token);
      await page.goto(`/locks/${encodeURIComponent(resource)}`);
      await page.getByRole('button', { name: 'Copy fence' }).click();
      await expect.poll(clipboard).toBe('1795749819839002');
      await page.getByRole('button', { name: 'Copy resource name' }).click();
      await expect.poll(clipboard).toBe(resource);
    } finally {
      await deleteLocks([resource]);
    }
  });
});
