import { expect, test } from './support/test';
import { E2E_LOGIN } from '../playwright.config';
import { signIn } from './support/login';
import { sandbox } from './support/sandbox';
import { saveScreens } from './support/screens';

// The masters' client ports start here (playwright.config.ts; E2E_REDIS_PORT_BASE lets two runs coexist).
const REDIS_PORT_BASE = Number(process.env.E2E_REDIS_PORT_BASE ?? 26381);

test.describe('home page: the nodes at a glance', () => {
  test('an anonymous visitor is sent to the login page and comes back after signing in', async ({ page }) => {
    await page.goto('/');
    await expect(page).toHaveURL(/\/login\?next=%2F/);
    await saveScreens(page, 'login');
    await page.getByLabel('Username').fill(E2E_LOGIN.username);
    await page.getByLabel('Password').fill('wrong-password-here');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByRole('form', { name: 'Sign in' }).getByRole('alert')).toContainText('wrong username or password');
    await page.getByLabel('Password').fill(E2E_LOGIN.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page).toHaveURL(/\/$/);
    await expect(page.getByTestId('role-badge')).toHaveText('operator');
    await expect(page.getByTestId('mode-badge')).toHaveText('sandbox cluster');
  });

  test.beforeEach(async ({ page }, testInfo) => {
    if (!testInfo.title.startsWith('an anonymous')) await signIn(page);
  });

  test('lists five masters up, sees a crashed node go down and come back after a restart', async ({ page }) => {
    await page.goto('/');
    await expect(page.getByTestId(/^node-card-\d+$/)).toHaveCount(5);
    for (let id = 1; id <= 5; id++) await expect(page.getByTestId(`node-state-${id}`)).toHaveText('up');
    await expect(page.getByTestId('cluster-banner')).toContainText('Locks can be granted');
    await expect(page.getByTestId('cluster-banner')).toContainText('5 of 5 masters reachable');
    await expect(page.getByTestId('node-card-1')).toContainText('AOF always');
    await expect(page.getByTestId('node-card-1')).toContainText(`127.0.0.1:${REDIS_PORT_BASE}`);
    await saveScreens(page, 'home');

    const control = sandbox();
    await control.act(2, { action: 'crash' });
    await expect(page.getByTestId('node-state-2')).toHaveText('down', { timeout: 2_000 });
    await expect(page.getByTestId('cluster-banner')).toContainText('4 of 5 masters reachable');
    await saveScreens(page, 'home-node-down');

    await control.act(2, { action: 'restart' });
    await expect(page.getByTestId('node-state-2')).toHaveText('up', { timeout: 5_000 });
    await expect(page.getByTestId('cluster-banner')).toContainText('5 of 5 masters reachable');
  });

  test('three nodes down: the banner says locks cannot be granted', async ({ page }) => {
    const control = sandbox();
    await page.goto('/');
    await expect(page.getByTestId('cluster-banner')).toContainText('Locks can be granted');
    try {
      for (const id of [1, 2, 3]) await control.act(id, { action: 'partition' });
      // A read of three blackholed masters waits out their command timeouts: on a loaded machine the
      // first reading after the cut can come 5 s late (seen: "read 5.7 s ago · stale", still grantable).
      await expect(page.getByTestId('cluster-banner')).toContainText('Locks cannot be granted', { timeout: 15_000 });
      await expect(page.getByTestId('node-state-1')).toHaveText('partitioned');
    } finally {
      for (const id of [1, 2, 3]) await control.act(id, { action: 'heal' });
    }
    await expect(page.getByTestId('cluster-banner')).toContainText('Locks can be granted', { timeout: 15_000 });
  });
});
