import { expect, test } from './support/test';
import { expectAxeClean } from './support/axe';
import { signIn } from './support/login';
import { saveScreens } from './support/screens';

test.describe('when the console stops answering', () => {
  test('the live dot turns red, a banner says since when with a retry, and the screen keeps its last reading', async ({ page }) => {
    await signIn(page);
    await page.goto('/');
    const banner = page.getByTestId('cluster-banner');
    await expect(banner).toContainText('Locks can be granted');
    const live = page.getByTestId('live-status');
    await expect(live).toHaveAttribute('data-state', 'live');

    // Every read from now on fails as a dropped connection would (counted, to see Retry ask again).
    let down = true;
    let attempts = 0;
    await page.route('**/api/**', (route) => {
      if (!down) return route.continue();
      attempts++;
      return route.abort('connectionrefused');
    });
    await expect(live).toHaveAttribute('data-state', 'offline', { timeout: 10_000 });
    const offline = page.getByTestId('connection-banner');
    await expect(offline).toContainText('The console is not answering');
    await expect(page.getByTestId('connection-last-ok')).toHaveText(/^\d\d:\d\d:\d\d\.\d{3}$/);
    // The last reading stays on screen, not a skeleton, but not as the answer of now.
    await expect(banner).toHaveAttribute('data-state', 'unknown');
    await expect(banner).toContainText('locks could be granted: that may no longer be true');
    await saveScreens(page, 'offline-banner');
    await expectAxeClean(page);

    // Retry asks the reads again at once (still down here: they fail again; the polls ask too).
    const before = attempts;
    await offline.getByRole('button', { name: 'Retry now' }).click();
    await expect.poll(() => attempts).toBeGreaterThan(before);
    // The console answers again: the banner goes by itself, with the next reads.
    down = false;
    await expect(offline).toBeHidden({ timeout: 10_000 });
    await expect(live).not.toHaveAttribute('data-state', 'offline');
    await page.unroute('**/api/**');
  });

  test('a read that never answers ends in an error with a retry, not an endless skeleton', async ({ page }) => {
    await signIn(page);
    // The nodes read hangs: no answer, no error, the connection just stays open.
    await page.route('**/api/nodes', () => undefined);
    await page.goto('/nodes');
    const error = page.getByTestId('nodes-error');
    await expect(error).toContainText('no answer from the console within 4 s', { timeout: 15_000 });
    // Every other read answers: the console is there, so it is not shown as offline (one endpoint
    // that hangs is this screen's error, not the console's).
    await expect(page.getByTestId('live-status')).not.toHaveAttribute('data-state', 'offline');
    await expect(page.getByTestId('connection-banner')).toHaveCount(0);
    await page.unroute('**/api/nodes');
    await error.getByRole('button', { name: 'Try again' }).click();
    await expect(page.getByTestId('nodes-vote-1')).toBeVisible();
  });
});
