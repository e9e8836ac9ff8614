import { expect, test } from './support/test';
import { signIn } from './support/login';
import { saveScreens } from './support/screens';
import { deleteLocks, randomToken, seedLocks } from './support/seed-locks';

/**
 * The Locks screen's state cards added up — "split" then "partial" showed both, while
 * each looked like a single choice. A click now shows that state alone; combining is explicit
 * (Ctrl-click) and said on screen.
 */
test.describe('state filter cards', () => {
  test('a click replaces the state shown; Ctrl-click combines, and the screen says so', async ({ page }) => {
    const prefix = `e2e-tabs-${Date.now().toString(36)}/`;
    const a = randomToken();
    const b = randomToken();
    const locks = [
      { resource: `${prefix}split`, token: a, ttlMs: 60_000, nodes: [1, 2] },
      { resource: `${prefix}split`, token: b, ttlMs: 60_000, nodes: [3, 4] },
      { resource: `${prefix}partial`, token: randomToken(), ttlMs: 60_000, nodes: [1] },
      { resource: `${prefix}held`, token: randomToken(), ttlMs: 60_000, nodes: [1, 2, 3, 4, 5] },
    ];
    await seedLocks(locks);
    try {
      await signIn(page);
      await page.goto(`/locks?prefix=${encodeURIComponent(prefix)}`);
      await expect(page.getByTestId('lock-matrix')).toHaveAttribute('data-loading-state', 'ready');
      const tabs = page.getByTestId('state-tabs');
      const tab = (state: string) => tabs.getByRole('button', { name: new RegExp(`^${state}`) });
      const rows = page.getByTestId('lock-row');
      await expect(rows).toHaveCount(3);

      await tab('split').click();
      await expect(tab('split')).toHaveAttribute('aria-pressed', 'true');
      await expect(rows).toHaveCount(1);
      await expect(rows.first()).toHaveAttribute('data-state', 'split');

      // Replaces: partial alone, split no longer pressed.
      await tab('partial').click();
      await expect(tab('partial')).toHaveAttribute('aria-pressed', 'true');
      await expect(tab('split')).toHaveAttribute('aria-pressed', 'false');
      await expect(rows).toHaveCount(1);
      await expect(rows.first()).toHaveAttribute('data-state', 'partial');

      // Combines only when asked, and says so.
      await expect(page.getByTestId('state-tabs-hint')).toHaveText('Ctrl-click to combine');
      await tab('split').click({ modifiers: ['Control'] });
      await expect(tab('split')).toHaveAttribute('aria-pressed', 'true');
      await expect(tab('partial')).toHaveAttribute('aria-pressed', 'true');
      await expect(rows).toHaveCount(2);
      await expect(page.getByTestId('state-tabs-hint')).toHaveText('2 states shown together · Ctrl-click to combine');
      await saveScreens(page, 'locks-state-tabs-combined');

      // The one shown, clicked again, shows all.
      await tab('held').click();
      await expect(rows).toHaveCount(1);
      await tab('held').click();
      await expect(page.getByRole('button', { name: /^All locks/ })).toHaveAttribute('aria-pressed', 'true');
      await expect(rows).toHaveCount(3);
    } finally {
      await deleteLocks(locks.map((l) => l.resource));
    }
  });
});
