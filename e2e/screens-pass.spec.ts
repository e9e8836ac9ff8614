import type { Page } from '@playwright/test';
import { expect, test } from './support/test';
import { signIn } from './support/login';
import { postAsSession } from './support/ops';
import { deleteLocks, seedLocks } from './support/seed-locks';

/**
 * The screenshot pass: every screen an operator and a teacher use, at a phone's, a laptop's and a
 * wide screen's width, in both themes, saved as PNGs under test-results/screens/pass/ for a person
 * to look at (cut names, overlaps, sideways scrolling, "none" where the truth is "unknown"). It
 * asserts only that each screen came up and that the page never scrolls sideways; what a person
 * found in them is fixed and asserted in the spec of that screen.
 */
const WIDTHS = [390, 1280, 1920] as const;
const HEIGHT: Record<(typeof WIDTHS)[number], number> = { 390: 844, 1280: 800, 1920: 1080 };
const RUN = Date.now().toString(36);
const LONG = Array.from({ length: 3 }, (_, i) => `tenant/acme-corporation-internal-billing-reconciliation-pass-${RUN}-${i + 1}`);
const HOLDER = { owner: 'inventory-sync', host: 'pod-inventory-sync-7f9c8d6b5-x2k4q' };

async function shoot(page: Page, name: string, ready: (page: Page) => Promise<void>, open?: (page: Page) => Promise<void>): Promise<void> {
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: HEIGHT[width] });
    await ready(page);
    if (open) await open(page);
    const sideways = await page.evaluate(() => {
      const over = document.documentElement.scrollWidth - document.documentElement.clientWidth;
      // What sticks out, innermost first, for the message.
      const culprits = [...document.body.querySelectorAll('*')]
        .filter((el) => el.getBoundingClientRect().right > document.documentElement.clientWidth + 1 && el.children.length === 0)
        .slice(0, 5)
        .map((el) => `${el.tagName.toLowerCase()}.${String(el.className).slice(0, 60)} "${el.textContent?.trim().slice(0, 40)}"`);
      return { over, culprits };
    });
    expect(sideways.over, `${name} scrolls sideways at ${width} px: ${sideways.culprits.join('; ')}`).toBeLessThanOrEqual(1);
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.screenshot({ path: `test-results/screens/pass/${name}-${width}-${scheme}.png`, fullPage: true });
    }
    await page.emulateMedia({ colorScheme: null });
  }
}

const goto = (path: string, loaded: (page: Page) => Promise<void>) => async (page: Page) => {
  await page.goto(path);
  await loaded(page);
};

test.describe('the screenshot pass', () => {
  test('every screen at 390, 1280 and 1920 px in both themes', async ({ page }) => {
    test.setTimeout(600_000);
    await seedLocks(
      LONG.map((resource, i) => ({
        resource,
        token: `tokPass${RUN}${i}abcdefghijklmnop`,
        ttlMs: 300_000,
        nodes: i === 2 ? [1, 2] : [1, 2, 3, 4, 5],
        meta: HOLDER,
      })),
    );
    try {
      await signIn(page);
      await shoot(
        page,
        'overview',
        goto('/', (p) => expect(p.getByTestId('cluster-banner')).toBeVisible()),
      );
      await shoot(
        page,
        'locks',
        goto(`/locks?search=${encodeURIComponent(`pass-${RUN}`)}`, (p) => expect(p.getByTestId('lock-row')).toHaveCount(3)),
      );
      const detail = `/locks/${encodeURIComponent(LONG[0]!)}`;
      await shoot(
        page,
        'lock-detail',
        goto(detail, (p) => expect(p.getByTestId('lock-detail')).toHaveAttribute('data-state', 'held')),
      );
      await shoot(
        page,
        'force-release-dialog',
        goto(detail, (p) => expect(p.getByTestId('lock-detail')).toHaveAttribute('data-state', 'held')),
        async (p) => {
          await p.getByTestId('force-release-button').click();
          await expect(p.getByTestId('force-release-preview')).toHaveAttribute('data-loading-state', 'ready');
        },
      );
      await shoot(
        page,
        'nodes',
        goto('/nodes', (p) =>
          expect(
            p
              .getByTestId(/^node-card-\d+$/)
              .or(p.locator('[aria-label^="node "]'))
              .first(),
          ).toBeVisible(),
        ),
      );
      await shoot(
        page,
        'audit',
        goto('/audit', (p) => expect(p.getByTestId('audit-table')).toHaveAttribute('data-loading-state', 'ready')),
      );
      await shoot(
        page,
        'chaos',
        goto('/chaos', (p) => expect(p.getByTestId('chaos-report')).toHaveAttribute('data-loading-state', 'ready')),
      );
      await shoot(
        page,
        'chaos-open',
        goto('/chaos', (p) => expect(p.getByTestId('chaos-report')).toHaveAttribute('data-loading-state', 'ready')),
        async (p) => {
          await p.getByTestId('chaos-nemesis-toggle').first().click();
          await expect(p.getByTestId('chaos-nemesis-detail')).toHaveCount(1);
        },
      );
      await shoot(
        page,
        'scenarios',
        goto('/scenarios', (p) => expect(p.locator('[data-testid^="scenario-card-"]').first()).toBeVisible()),
      );

      // The bulk result dialog: two long names released together, fresh ones at each width.
      for (const width of WIDTHS) {
        const two = [1, 2].map((i) => `tenant/acme-corporation-internal-bulk-pass-${RUN}-${width}-${i}`);
        await seedLocks(
          two.map((resource, i) => ({
            resource,
            token: `tokBulkPass${RUN}${width}${i}abcdefgh`,
            ttlMs: 120_000,
            nodes: [1, 2, 3, 4, 5],
            meta: HOLDER,
          })),
        );
        await page.setViewportSize({ width, height: HEIGHT[width] });
        await page.goto(`/locks?search=${encodeURIComponent(`bulk-pass-${RUN}-${width}-`)}`);
        await expect(page.getByTestId('lock-row')).toHaveCount(2);
        for (const box of await page.getByTestId('lock-select').all()) await box.check();
        await page
          .getByTestId('selection-bar')
          .getByRole('button', { name: /^Force-release/ })
          .click();
        const dialog = page.getByTestId('bulk-release-dialog');
        await dialog.getByLabel(/Reason/).fill('screenshot pass');
        await dialog.getByLabel(/to confirm/).fill('2');
        await dialog.getByTestId('bulk-release-confirm').click();
        await expect(dialog.getByTestId('bulk-release-summary')).toBeVisible();
        for (const scheme of ['light', 'dark'] as const) {
          await page.emulateMedia({ colorScheme: scheme });
          await page.screenshot({ path: `test-results/screens/pass/bulk-result-${width}-${scheme}.png`, fullPage: true });
        }
        await page.emulateMedia({ colorScheme: null });
        await dialog.getByRole('button', { name: 'Done' }).click();
      }

      // A scenario running, then finished.
      const started = await postAsSession(page, '/api/scenarios/minority-failure/runs', { seed: 7, speed: 2 });
      expect(started.status(), await started.text()).toBe(200);
      await page.goto('/scenarios');
      await expect(page.getByTestId('scenario-player')).toBeVisible();
      await shoot(page, 'scenario-running', async () => {
        await expect(page.getByTestId('scenario-player')).toBeVisible();
      });
      for (const deadline = Date.now() + 120_000; ;) {
        const run = (await (await page.request.get('/api/scenarios/runs/current')).json()) as { run: { status: string } | null };
        if (!run.run || ['done', 'cancelled', 'failed'].includes(run.run.status)) break;
        expect(Date.now(), `run still ${run.run.status}`).toBeLessThan(deadline);
        if (run.run.status === 'predict') await postAsSession(page, '/api/scenarios/runs/current/predict', { choice: null });
        // poll: until the run ends
        await page.waitForTimeout(200);
      }
      await expect(page.getByTestId('scenario-player')).toHaveAttribute('data-status', /done|failed|cancelled/, { timeout: 30_000 });
      await shoot(page, 'scenario-finished', async () => {
        await expect(page.getByTestId('scenario-player')).toBeVisible();
      });
    } finally {
      await deleteLocks(LONG);
    }
  });
});
