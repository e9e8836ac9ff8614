import { expectAxeClean } from './support/axe';
import { signIn } from './support/login';
import { Redlock } from '@redlock-console/redlock';
import { E2E_MAX_TTL_MS } from '../playwright.config';
import { AS_CLIENT, postAsSession } from './support/ops';
import { sandbox } from './support/sandbox';
import { saveScreens } from './support/screens';
import { expectStackedCards } from './support/stacked-table';
import { expect, test } from './support/test';

/**
 * "Who held invoice-42 at 03:12?" — the lock detail page shows each hold of the
 * resource: the key it was taken with (not what the client claimed), its fence, how long, how it
 * ended. Both themes, a phone's width without sideways scrolling, axe-clean.
 */
test.describe('lock history on the lock detail page', () => {
  test('a hold taken and released through an API key, and one still held, with who authenticated and how each ended', async ({ page }) => {
    const resource = `e2e-history-${Date.now()}`;
    const first = await page.request.post('/api/locks', {
      headers: AS_CLIENT,
      data: { resource, ttlMs: 5_000, metadata: { owner: 'operator', job: 'invoice-run' } },
    });
    expect(first.status()).toBe(200);
    const { token } = (await first.json()) as { token: string };
    expect((await page.request.post(`/api/locks/${resource}/release`, { headers: AS_CLIENT, data: { token } })).status()).toBe(200);

    await signIn(page);
    // The hold still held is taken after the sign-in: its 5 s lease (the sandbox's ceiling) must
    // outlast only the page's load, not a sign-in on a loaded machine too (seen: "expired").
    expect((await page.request.post('/api/locks', { headers: AS_CLIENT, data: { resource, ttlMs: 5_000 } })).status()).toBe(200);
    await page.goto(`/locks/${encodeURIComponent(resource)}`);
    const panel = page.getByTestId('lock-history');
    await expect(panel).toHaveAttribute('data-loading-state', 'ready');
    const holds = panel.getByTestId('history-hold');
    await expect(holds).toHaveCount(2, { timeout: 5_000 });
    await expect(holds.nth(0)).toHaveAttribute('data-ended', 'held');
    await expect(holds.nth(1)).toHaveAttribute('data-ended', 'released');
    await expect(holds.nth(1)).toContainText('client:e2e-client');
    await expect(holds.nth(1)).toContainText('operator'); // what it claimed, shown apart
    await expect(panel).not.toContainText(token);
    await page.setViewportSize({ width: 1280, height: 900 });
    await panel.scrollIntoViewIfNeeded();
    await expect(panel.getByRole('columnheader', { name: 'Granted' })).toBeVisible(); // a table's head row
    await saveScreens(page, 'lock-history');
    await expectAxeClean(page);

    // On a phone the rows stack into cards (as the semaphore's History does): no sideways scroll,
    // neither of the page nor inside the panel, and each cell led by its column's name.
    await page.setViewportSize({ width: 320, height: 800 });
    await expect(holds).toHaveCount(2);
    const region = panel.getByRole('region', { name: 'History of the holds' });
    await expectStackedCards(page, region, ['Granted', 'Authenticated as', 'Claims to be', 'Fence', 'Held for', 'Ended'], 2);
    await saveScreens(page, 'lock-history-320');
    await expectAxeClean(page);
  });

  test("the Audit screen's lock-service view narrows to one API key and links each resource to its history", async ({ page }) => {
    const resource = `e2e-keylog-${Date.now()}`;
    const granted = await page.request.post('/api/locks', { headers: AS_CLIENT, data: { resource, ttlMs: 5_000 } });
    const { token } = (await granted.json()) as { token: string };
    await page.request.post(`/api/locks/${resource}/release`, { headers: AS_CLIENT, data: { token } });
    await signIn(page);
    await page.goto('/audit');
    const log = page.getByTestId('lock-service-log');
    await log.getByLabel('Key or user').fill('client:e2e-client');
    await log.getByRole('button', { name: 'Filter' }).click();
    const mine = log.getByTestId('lock-service-entry').filter({ hasText: resource });
    await expect(mine).toHaveCount(2, { timeout: 5_000 });
    await expect(mine.nth(0)).toHaveAttribute('data-event', 'released');
    await expect(mine.nth(1)).toHaveAttribute('data-event', 'granted');
    await log.getByLabel('Key or user').fill('client:nobody');
    await log.getByRole('button', { name: 'Filter' }).click();
    await expect(log).toContainText('Nothing recorded for client:nobody');
    await log.getByLabel('Key or user').fill('client:e2e-client');
    await log.getByRole('button', { name: 'Filter' }).click();
    await log.scrollIntoViewIfNeeded();
    await saveScreens(page, 'audit-lock-service');
    await expectAxeClean(page);
    await mine.nth(0).getByRole('link', { name: resource }).click();
    await expect(page.getByTestId('lock-history').getByTestId('history-hold')).toHaveCount(1);
  });
  test('the lock-service view shows older entries on request, past its first 200', async ({ page }) => {
    const run = `e2e-older-${Date.now()}`;
    // 110 grants and releases: 220 entries, the first of them beyond the first page.
    for (let i = 0; i < 110; i++) {
      const granted = await page.request.post('/api/locks', { headers: AS_CLIENT, data: { resource: `${run}-${i}`, ttlMs: 5_000 } });
      const { token } = (await granted.json()) as { token: string };
      await page.request.post(`/api/locks/${run}-${i}/release`, { headers: AS_CLIENT, data: { token } });
    }
    await signIn(page);
    await page.goto('/audit');
    const log = page.getByTestId('lock-service-log');
    const first = log.getByTestId('lock-service-entry').filter({ hasText: `${run}-0` });
    await expect(log.getByTestId('lock-service-count')).toContainText('200 entries', { timeout: 10_000 });
    await expect(log.getByTestId('lock-service-count')).toContainText('limit reached');
    await expect(first).toHaveCount(0);
    await log.getByTestId('show-older').click();
    await expect(first).toHaveCount(2, { timeout: 10_000 });
    await expect(log.getByTestId('lock-service-count')).not.toContainText('200 entries');
    await expectAxeClean(page);
  });

  test('a lock held by a client of the package, outside the lock service: its hold while held, and its true length once force-released', async ({
    page,
  }) => {
    const resource = `e2e-history-pkg-${Date.now()}`;
    const urls = (await sandbox().nodes()).sort((a, b) => a.id - b.id).map((n) => n.url);
    // A 1 s node deadline, not the core's 100 ms default: on a loaded machine an extend read "0 for, 5 timeout".
    const client = new Redlock(urls, { retryCount: 2, maxTtlMs: E2E_MAX_TTL_MS, nodeTimeoutMs: 1_000 });
    try {
      const lock = await client.acquire(resource, 4_000, { metadata: { owner: 'inventory-sync@pod-7' } });
      let extending = true;
      let failure = '';
      const loop = (async () => {
        while (extending) {
          // work: the holder extends every second
          await new Promise((r) => setTimeout(r, 1_000));
          if (extending)
            await lock.extend(4_000).catch((err: unknown) => {
              failure = String(err);
              extending = false;
            });
        }
      })();
      await signIn(page);
      await page.goto(`/locks/${encodeURIComponent(resource)}`);
      const panel = page.getByTestId('lock-history');
      await expect(panel).toHaveAttribute('data-loading-state', 'ready');
      const hold = panel.getByTestId('history-hold');
      await expect(hold).toHaveCount(1);
      await expect(hold).toHaveAttribute('data-ended', 'held');
      await expect(hold.getByTestId('history-granted')).toHaveAttribute('data-grant-time', 'holder-clock');
      await expect(hold).toContainText('by the holder’s clock');
      await expect(hold).toContainText('taken outside the lock service');
      await expect(hold).toContainText('inventory-sync@pod-7');
      await expect(hold).toContainText('still held');

      await expect.poll(() => (failure ? -1 : lock.extensions), { timeout: 10_000, message: failure }).toBeGreaterThanOrEqual(2);
      const released = await postAsSession(page, `/api/locks/${encodeURIComponent(resource)}/force-release`, {
        token: lock.token,
        reason: 'e2e: holder outside the service',
        confirmLiveHolder: true,
      });
      expect(released.status(), await released.text()).toBe(200);
      extending = false;
      await loop;
      await expect(async () => {
        await page.reload();
        await expect(hold).toHaveAttribute('data-ended', 'force-released', { timeout: 5_000 });
      }).toPass({ timeout: 30_000 });
      // Held for as long as it was (two extensions a second apart at least), never "0 ms".
      await expect(hold.locator('td').nth(4)).toHaveText(/^([2-9]|\d{2})s/);
      await expect(hold).not.toContainText('0 ms');
      await saveScreens(page, 'lock-history-package-client');
    } finally {
      await client.quit();
    }
  });
});
