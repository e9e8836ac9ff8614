import type { Locator, Page } from '@playwright/test';
import { expect, test } from './support/test';
import { signIn } from './support/login';
import { acquire } from './support/ops';
import { sandbox } from './support/sandbox';
import { deleteLocks, seedLocks } from './support/seed-locks';

/**
 * What the screenshot pass found cut or scrolling, each asserted where it was seen: node addresses
 * whole, the lock service's log and the API keys without a sideways frame on a phone or a tablet,
 * the force-release dry run's "Will" column inside its table on a phone, and a name cut in its
 * middle showing one "…", not two.
 */
const RUN = Date.now().toString(36);
const NAMES = Array.from({ length: 4 }, (_, i) => `tenant/acme-corporation-internal-billing-reconciliation-fit-${RUN}-${i + 1}`);
const HOLDER = { owner: 'inventory-sync', host: 'pod-inventory-sync-7f9c8d6b5-x2k4q' };

/** Is an element's content wider than its box (to a hundredth of a pixel, which scrollWidth rounds away)? */
async function cutBoxes(scope: Locator): Promise<string[]> {
  return scope.evaluateAll((roots) =>
    roots.flatMap((root) =>
      [root, ...root.querySelectorAll('*')].flatMap((el) => {
        const style = getComputedStyle(el);
        if (style.overflowX === 'visible' || style.display === 'none') return [];
        const range = document.createRange();
        range.selectNodeContents(el);
        const inner = range.getBoundingClientRect();
        const box = el.getBoundingClientRect();
        return el.scrollWidth > el.clientWidth + 1 || inner.right > box.right + 0.01
          ? [`${el.tagName.toLowerCase()}.${el.className}: "${el.textContent?.trim().slice(0, 60)}"`]
          : [];
      }),
    ),
  );
}

/** For each name cut in its middle (components/ui/middle-text.tsx): how many of its parts paint an ellipsis. */
async function ellipsesPerName(page: Page, selector: string): Promise<Array<{ name: string; ellipses: number }>> {
  return page.locator(selector).evaluateAll((names) =>
    names.map((name) => {
      const parts = [...name.children].filter((c) => c.getAttribute('aria-hidden') === 'true');
      const ellipses = parts.filter((part) => {
        if (getComputedStyle(part).textOverflow !== 'ellipsis') return false;
        const range = document.createRange();
        range.selectNodeContents(part);
        // Content wider than the box by any fraction of a pixel: the browser paints "…".
        return range.getBoundingClientRect().width > part.getBoundingClientRect().width + 0.01;
      }).length;
      return { name: (name as HTMLElement).dataset.full ?? '', ellipses };
    }),
  );
}

test.describe('what the screenshot pass found cut', () => {
  test.beforeEach(async ({ page }) => {
    await signIn(page);
  });

  test('node cards show each address whole, at every width, beside the widest state pill', async ({ page }) => {
    // "partitioned" is the widest pill: beside it a 224 px card had room for "127.0.0.1:27…".
    const control = sandbox();
    await control.act(5, { action: 'partition' });
    try {
      await page.goto('/');
      await expect(page.getByTestId('node-state-5')).toHaveText('partitioned', { timeout: 20_000 });
      for (const width of [390, 768, 1024, 1280, 1440, 1920]) {
        await page.setViewportSize({ width, height: 900 });
        const cards = page.getByTestId(/^node-card-\d+$/);
        await expect(cards).toHaveCount(5, { timeout: 20_000 });
        for (const card of await cards.all()) {
          const address = card.locator('header [title]').first();
          const label = (await address.getAttribute('title'))!;
          expect(label).toMatch(/:\d+/);
          await expect(address).toHaveText(label);
          // Painted whole: not wider than its box (an ellipsis), and inside its card (which clips).
          const fit = await address.evaluate((el) => {
            const range = document.createRange();
            range.selectNodeContents(el);
            const text = range.getBoundingClientRect();
            const card = el.closest('article')!.getBoundingClientRect();
            return {
              cut: el.scrollWidth > el.clientWidth + 1 || text.right > el.getBoundingClientRect().right + 0.5,
              outside: text.right > card.right,
            };
          });
          expect(fit, `the address "${label}" at ${width} px`).toEqual({ cut: false, outside: false });
        }
      }
    } finally {
      await control.act(5, { action: 'heal' });
    }
  });

  test('a Nodes row fits a phone and a tablet: no fact over another, no action cut at its right edge', async ({ page }) => {
    for (const width of [390, 768]) {
      await page.setViewportSize({ width, height: 900 });
      await page.goto('/nodes');
      const rows = page.getByTestId(/^node-row-\d+$/);
      await expect(rows).toHaveCount(5, { timeout: 20_000 });
      for (const row of await rows.all()) {
        const layout = await row.evaluate((el) => {
          const box = el.getBoundingClientRect();
          const past = [...el.querySelectorAll('button, [class*="fact"]')]
            .filter((b) => b.getBoundingClientRect().right > box.right + 0.5)
            .map((b) => b.textContent?.trim());
          const facts = [...el.querySelectorAll('[class*="factLabel"], [class*="factValue"]')].map((f) => f.getBoundingClientRect());
          const over = facts.flatMap((a, i) =>
            facts
              .slice(i + 1)
              .filter((b) => a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5),
          ).length;
          return { past, over };
        });
        expect(layout, `node row at ${width} px`).toEqual({ past: [], over: 0 });
      }
    }
  });

  test('the lock service log and the API keys are cards on a phone and a tablet: nothing scrolls sideways in their frames', async ({
    page,
  }) => {
    // One entry in the lock service's log at least: a grant and release of a long name.
    // (Asked again while a busy host times the votes out, as a client would.)
    await expect(async () => {
      const res = await acquire(page, NAMES[0]!, 5_000);
      expect(res.status(), await res.text()).toBeLessThan(300);
    }).toPass({ timeout: 30_000 });
    for (const width of [390, 768]) {
      await page.setViewportSize({ width, height: 900 });
      await page.goto('/audit');
      await expect(page.getByTestId('lock-service-entry').first()).toBeVisible({ timeout: 20_000 });
      await expect(page.getByTestId('api-key-row').first()).toBeVisible();
      for (const frame of ['Lock service entries', 'API keys and their quotas']) {
        const size = await page.getByRole('region', { name: frame }).evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth }));
        expect(size.scroll, `${frame} scrolls sideways at ${width} px`).toBeLessThanOrEqual(size.client + 1);
      }
      // Every field is labelled on its card, and the resource reads whole.
      const entry = page.getByTestId('lock-service-entry').filter({ hasText: NAMES[0]! }).first();
      await expect(entry).toBeVisible();
      expect(await cutBoxes(entry), `a lock service entry cut at ${width} px`).toEqual([]);
    }
  });

  test("the force-release dry run's Will column stays inside its table on a phone, and the holder's name is whole", async ({ page }) => {
    // A majority on one token and the other two nodes on another: "will delete" and "left alone: other token".
    await seedLocks([
      { resource: NAMES[1]!, token: `tokFit${RUN}abcdefghijklmnopq`, ttlMs: 120_000, nodes: [1, 2, 3], meta: HOLDER },
      { resource: NAMES[1]!, token: `tokFitOther${RUN}abcdefghijklm`, ttlMs: 120_000, nodes: [4, 5], meta: HOLDER },
    ]);
    try {
      await page.setViewportSize({ width: 390, height: 844 });
      await page.goto(`/locks/${encodeURIComponent(NAMES[1]!)}`);
      // Behind it, the holder's tile: whole on a phone, not "invento…".
      await expect(page.getByTestId('detail-holder')).toHaveText(HOLDER.owner);
      expect(await cutBoxes(page.getByTestId('detail-holder'))).toEqual([]);
      await page.getByTestId('force-release-button').click();
      const dialog = page.getByTestId('force-release-dialog');
      await expect(dialog.getByTestId('force-release-preview')).toHaveAttribute('data-loading-state', 'ready');
      const table = dialog.getByTestId('force-release-nodes');
      await expect(table.locator('[data-outcome="would-delete"]')).toHaveCount(3);
      await expect(table.locator('[data-outcome="other-holder"]')).toHaveCount(2);
      // Every cell ends inside the table, the table inside the dialog, the dialog inside the screen.
      const dialogBox = (await dialog.boundingBox())!;
      expect(dialogBox.x + dialogBox.width, 'the dialog ends past the screen').toBeLessThanOrEqual(390);
      const tableBox = (await table.boundingBox())!;
      expect(tableBox.x + tableBox.width, 'the dry run ends past the dialog').toBeLessThanOrEqual(dialogBox.x + dialogBox.width);
      expect(await cutBoxes(dialog.getByRole('list', { name: 'Steps' }))).toEqual([]);
      for (const cell of await table.locator('th, td').all()) {
        const b = (await cell.boundingBox())!;
        expect(b.x + b.width, `a cell ends past the table: ${await cell.textContent()}`).toBeLessThanOrEqual(
          tableBox.x + tableBox.width + 1,
        );
      }
      expect(await cutBoxes(table)).toEqual([]);
    } finally {
      await deleteLocks([NAMES[1]!]);
    }
  });

  test('a name cut in its middle shows one "…", not two, at every width', async ({ page }) => {
    await seedLocks(
      NAMES.map((resource, i) => ({
        resource,
        token: `tokFitName${RUN}${i}abcdefghijk`,
        ttlMs: 120_000,
        nodes: [1, 2, 3, 4, 5],
        meta: HOLDER,
      })),
    );
    try {
      for (const width of [390, 768, 1280, 1920]) {
        await page.setViewportSize({ width, height: 900 });
        await page.goto(`/locks?search=${encodeURIComponent(`fit-${RUN}`)}`);
        await expect(page.getByTestId('lock-row')).toHaveCount(NAMES.length);
        const names = await ellipsesPerName(page, '[data-testid="lock-row"] [data-full]');
        expect(names.length).toBeGreaterThanOrEqual(NAMES.length);
        for (const n of names) expect(n.ellipses, `"${n.name}" at ${width} px`).toBeLessThanOrEqual(1);
      }
    } finally {
      await deleteLocks(NAMES);
    }
  });
});
