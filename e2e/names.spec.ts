import type { Locator, Page } from '@playwright/test';
import { expect, test } from './support/test';
import { expectAxeClean } from './support/axe';
import { signIn } from './support/login';
import { postAsSession } from './support/ops';
import { saveScreens } from './support/screens';
import { deleteLocks, seedLocks } from './support/seed-locks';

/**
 * Names whole: six resources that differ only at their end, a holder whose pod name is
 * long, and a lock split three ways whose tokens share a long beginning. At every width an
 * operator brings, in both themes: each name reads differently on screen, its whole value is in a
 * title (and in the page's text), no token is cut below a distinct short form, nothing sticks out
 * of its box, nothing scrolls sideways, and each screen is axe-clean.
 */
const WIDTHS = [390, 768, 1280, 1920] as const;
const HEIGHT = 900;
const RUN = Date.now().toString(36);
const TENANTS = Array.from({ length: 6 }, (_, i) => `tenant/acme-corporation-internal-billing-reconciliation-${RUN}-${i + 1}`);
const OWNER = 'inventory-sync';
const HOST = 'pod-inventory-sync-7f9c8d6b5-x2k4q';
const HOLDER = `${OWNER}@${HOST}`;
const SPLIT = `tenant/acme-corporation-internal-split-${RUN}`;
/** Three tokens with the same first twenty characters: the old chips read "tokSpl" three times. */
const SPLIT_TOKENS = ['q7Hx', 'Zp2m', 'Kc9e'].map((tail) => `tokSplitSharedPrefix${RUN}${tail}`);
const ALL = [1, 2, 3, 4, 5];

/** The characters of an element's text that are painted inside every box that clips it (ellipsis and overflow cut the rest). */
async function visibleText(el: Locator): Promise<string> {
  return el.evaluate((root) => {
    // Every box between the glyph and the page that clips (the name's own head and tail included).
    const clipsOf = (from: Element): DOMRect[] => {
      const clips: DOMRect[] = [root.getBoundingClientRect()];
      for (let n: Element | null = from; n && n !== document.body; n = n.parentElement) {
        if (getComputedStyle(n).overflowX !== 'visible') clips.push(n.getBoundingClientRect());
      }
      return clips;
    };
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    let out = '';
    for (let t = walker.nextNode() as Text | null; t; t = walker.nextNode() as Text | null) {
      const clips = clipsOf(t.parentElement!);
      for (let i = 0; i < t.length; i++) {
        const range = document.createRange();
        range.setStart(t, i);
        range.setEnd(t, i + 1);
        const r = range.getBoundingClientRect();
        if (r.width === 0) continue;
        // A glyph whose right edge passes a clip is cut (or under the ellipsis).
        if (clips.every((c) => r.left >= c.left - 0.5 && r.right <= c.right + 0.5)) out += t.data[i];
      }
    }
    return out;
  });
}

/** Elements (inside `scope`) whose content is wider than their box while they clip it: the cut ones, for the message. */
async function overflowing(page: Page, scope: string): Promise<string[]> {
  return page.evaluate((selector) => {
    const out: string[] = [];
    for (const root of Array.from(document.querySelectorAll(selector))) {
      for (const el of [root, ...Array.from(root.querySelectorAll<HTMLElement>('*'))] as HTMLElement[]) {
        const style = getComputedStyle(el);
        if (style.display === 'none' || style.position === 'absolute' || el.closest('[aria-hidden="true"]')) continue;
        // A MiddleText gives way by design (its head, then its tail's start): visibleText checks its end shows.
        if (el.parentElement?.hasAttribute('data-full')) continue;
        // A note that gives way says itself whole in its title.
        const text = (el.textContent ?? '').replace(/^[\s·]+/, '').trim();
        if (text && el.title.includes(text)) continue;
        if (el.scrollWidth > el.clientWidth + 1 && style.overflowX !== 'visible' && style.overflowX !== 'auto' && el.clientWidth > 0)
          out.push(`${el.tagName.toLowerCase()}.${el.className.toString().slice(0, 40)} "${(el.textContent ?? '').slice(0, 40)}"`);
      }
    }
    return out.slice(0, 8);
  }, scope);
}

async function noSideways(page: Page, label: string): Promise<void> {
  const { scrollWidth, innerWidth } = await page.evaluate(() => ({
    scrollWidth: document.documentElement.scrollWidth,
    innerWidth: window.innerWidth,
  }));
  expect.soft(scrollWidth, `${label} scrolls sideways`).toBeLessThanOrEqual(innerWidth);
}

test.describe('names whole: long resources, holders, split tokens at 390, 768, 1280 and 1920 px', () => {
  test.beforeAll(async () => {
    await seedLocks([
      ...TENANTS.map((resource) => ({
        resource,
        token: `tok${RUN}${resource.slice(-1)}abcdefghij`,
        ttlMs: 600_000,
        nodes: ALL,
        meta: { owner: OWNER, host: HOST },
      })),
      { resource: SPLIT, token: SPLIT_TOKENS[0]!, ttlMs: 600_000, nodes: [1, 2] },
      { resource: SPLIT, token: SPLIT_TOKENS[1]!, ttlMs: 600_000, nodes: [3, 4] },
      { resource: SPLIT, token: SPLIT_TOKENS[2]!, ttlMs: 600_000, nodes: [5] },
    ]);
  });
  test.afterAll(async () => {
    await deleteLocks([...TENANTS, SPLIT]);
  });

  test('Locks: six tenants read differently, the holder is whole on wide screens, the split tokens differ, nothing cut', async ({
    page,
  }) => {
    test.slow();
    await signIn(page);
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: HEIGHT });
      await page.goto(`/locks?search=${RUN}`);
      const rows = page.getByTestId('lock-row');
      await expect(rows).toHaveCount(7);

      const names: string[] = [];
      for (const resource of TENANTS) {
        const link = rows.and(page.locator(`[data-resource="${resource}"]`)).getByTestId('lock-resource');
        // The whole name: to screen readers (one copy, not the two flex parts Chromium would read with a
        // space between them), on hover and on keyboard focus.
        await expect(link).toHaveAccessibleName(resource);
        await expect(link.locator('[title]').first()).toHaveAttribute('title', resource);
        expect(await link.getAttribute('data-full')).toContain(resource);
        names.push(await visibleText(link));
      }
      expect(new Set(names).size, `at ${width} px the six names read ${JSON.stringify(names)}`).toBe(6);
      // Each keeps its distinguishing end on screen.
      names.forEach((n, i) => expect(n, `at ${width} px`).toContain(`${RUN}-${i + 1}`));

      const sub = rows.and(page.locator(`[data-resource="${TENANTS[0]}"]`)).getByTestId('lock-subline');
      await expect(sub.locator('[title]').first()).toHaveAttribute('title', `held by ${HOLDER}`);
      const holderSeen = await visibleText(sub);
      if (width >= 1280) expect(holderSeen, `holder at ${width} px`).toContain(HOLDER);
      else expect(holderSeen, `holder at ${width} px keeps its end`).toContain('k4q');

      const split = rows.and(page.locator(`[data-resource="${SPLIT}"]`));
      const chips = split.locator('[data-token]').filter({ has: page.locator('span') });
      const shortForms: string[] = [];
      for (const token of SPLIT_TOKENS) {
        const chip = split.locator(`button[data-token="${token}"]`).first();
        await expect(chip).toHaveAttribute('title', new RegExp(token));
        await expect(chip).toHaveAttribute('data-tip', token);
        const seen = await visibleText(chip);
        expect(seen.length, `token at ${width} px reads "${seen}"`).toBeGreaterThanOrEqual(5);
        shortForms.push(seen);
      }
      expect(await chips.count()).toBeGreaterThanOrEqual(5);
      expect(new Set(shortForms).size, `at ${width} px the split tokens read ${JSON.stringify(shortForms)}`).toBe(3);

      expect(await overflowing(page, '[data-testid="lock-row"]'), `cut at ${width} px`).toEqual([]);
      await noSideways(page, `locks at ${width} px`);
      await saveScreens(page, `names-locks-${width}`);
      if (width === 390 || width === 1920) await expectAxeClean(page);
    }
  });

  test('Locks uses a wide screen: at 1920 px the matrix spans the page, not a 1,000 px column', async ({ page }) => {
    await signIn(page);
    await page.setViewportSize({ width: 1920, height: HEIGHT });
    await page.goto(`/locks?search=${RUN}`);
    await expect(page.getByTestId('lock-row')).toHaveCount(7);
    const box = (await page.getByTestId('lock-matrix').boundingBox())!;
    expect(box.width).toBeGreaterThanOrEqual(1800);
  });

  test('a phone shows the first lock row on the first screen, filters behind a button that says what is on', async ({ page }) => {
    await signIn(page);
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`/locks?search=${RUN}`);
    const first = page.getByTestId('lock-row').first();
    await expect(first).toBeVisible();
    const top = (await first.boundingBox())!.y;
    expect(top, 'the first row starts within the first screen').toBeLessThan(500);

    const toggle = page.getByRole('button', { name: /Filters/ });
    await expect(toggle).toHaveAttribute('aria-expanded', 'false');
    await expect(toggle).toContainText('1 on');
    await expect(page.getByRole('searchbox', { name: 'Search locks' })).toBeHidden();
    await toggle.focus();
    await page.keyboard.press('Enter');
    await expect(toggle).toHaveAttribute('aria-expanded', 'true');
    await expect(page.getByRole('searchbox', { name: 'Search locks' })).toBeVisible();
    await expect(page.getByRole('searchbox', { name: 'Search locks' })).toHaveValue(RUN);
    await expect(page.getByTestId('state-tabs')).toBeVisible();
    await expectAxeClean(page);
    await saveScreens(page, 'names-locks-phone-filters-open');
  });

  test('Audit at 390 and 768: every field of an entry on screen, the long target whole', async ({ page }) => {
    test.slow();
    await signIn(page);
    const target = TENANTS[5]!;
    const token = `tok${RUN}${target.slice(-1)}abcdefghij`;
    const released = await postAsSession(page, `/api/locks/${encodeURIComponent(target)}/force-release`, {
      token,
      reason: 'e2e names: a long target in the audit log',
    });
    expect(released.status(), await released.text()).toBe(200);
    for (const width of [390, 768, 1280] as const) {
      await page.setViewportSize({ width, height: HEIGHT });
      await page.goto('/audit?action=lock.force-release');
      const row = page.getByTestId('audit-row').filter({ hasText: target }).first();
      await expect(row).toBeVisible();
      const cells = row.locator('td');
      // Time, actor, action, target, outcome: each painted with its text readable (not a three-letter stub).
      const action = await visibleText(row.locator('td').nth(2));
      expect(action, `action at ${width} px`).toContain('lock.force-release');
      const actor = await visibleText(cells.nth(1));
      expect(actor, `actor at ${width} px`).toContain('e2e-operator');
      const seenTarget = await visibleText(cells.nth(3));
      if (width < 900) expect(seenTarget.replace(/\s/g, ''), `target at ${width} px`).toContain(target);
      else expect(seenTarget, `target at ${width} px keeps its end`).toContain(`${RUN}-6`);
      await expect(cells.nth(3)).toHaveAttribute('title', new RegExp(target.replace(/[/]/g, '\\/')));
      expect(await visibleText(cells.nth(4)), `outcome at ${width} px`).toMatch(/ok|partial/);
      await noSideways(page, `audit at ${width} px`);
      await saveScreens(page, `names-audit-${width}`);
      if (width === 390) await expectAxeClean(page);
    }
  });
});

test.describe('bulk force-release of long names', () => {
  test('the result dialog keeps its Audit column inside, and the page behind lets go of the released locks', async ({ page }) => {
    test.slow();
    const names = (width: number) =>
      Array.from({ length: 6 }, (_, i) => `tenant/acme-corporation-internal-bulk-reconciliation-${RUN}-${width}-${i + 1}`);
    const bulk = [...names(1280), ...names(390)];
    await seedLocks(
      bulk.map((resource, i) => ({
        resource,
        token: `tokBulk${RUN}${i}abcdefghijkl`,
        ttlMs: 120_000,
        nodes: ALL,
        meta: { owner: OWNER, host: HOST },
      })),
    );
    try {
      await signIn(page);
      for (const width of [1280, 390] as const) {
        const mine = names(width);
        await page.setViewportSize({ width, height: HEIGHT });
        await page.goto(`/locks?search=${encodeURIComponent(`bulk-reconciliation-${RUN}-${width}-`)}`);
        const rows = page.getByTestId('lock-row');
        await expect(rows).toHaveCount(6);
        for (const box of await page.getByTestId('lock-select').all()) await box.check();
        const bar = page.getByTestId('selection-bar');
        await expect(bar.getByTestId('selection-count')).toHaveText('6');
        await bar.getByRole('button', { name: 'Force-release 6…' }).click();
        const dialog = page.getByTestId('bulk-release-dialog');
        await expect(dialog.getByTestId('bulk-release-row')).toHaveCount(6);
        await dialog.getByLabel(/Reason/).fill('e2e names: a batch of long names');
        await dialog.getByLabel(/to confirm/).fill('6');
        await dialog.getByTestId('bulk-release-confirm').click();
        await expect(dialog.getByTestId('bulk-release-summary')).toContainText('over 6 of 6 tokens');
        // Every result row's cells lie inside the dialog: the Audit column is not clipped.
        const dialogBox = (await dialog.boundingBox())!;
        for (const cell of await dialog.getByTestId('bulk-release-row').locator('td, th').all()) {
          const b = (await cell.boundingBox())!;
          expect(b.x + b.width, `a result cell ends past the dialog at ${width} px`).toBeLessThanOrEqual(dialogBox.x + dialogBox.width + 1);
        }
        for (const name of mine) await expect(dialog.getByTestId('bulk-release-results')).toContainText(name);
        expect(await overflowing(page, '[data-testid="bulk-release-results"]'), `cut at ${width} px`).toEqual([]);
        await expectAxeClean(page);
        await saveScreens(page, `names-bulk-result-${width}`);
        // Behind the dialog, the released locks are no longer selected (the table has let them go).
        await expect(bar).toBeHidden();
        await dialog.getByRole('button', { name: 'Done' }).click();
        await expect(rows).toHaveCount(0);
        await expect(bar).toBeHidden();
      }
    } finally {
      await deleteLocks(bulk);
    }
  });
});

test.describe('the Chaos page in sections', () => {
  test('one table at a time behind keyboard tabs, each nemesis a summary with its figures behind a disclosure: short at every width, no column cut', async ({
    page,
  }) => {
    await signIn(page);
    for (const width of [390, 1280, 1920] as const) {
      await page.setViewportSize({ width, height: HEIGHT });
      await page.goto('/chaos');
      const tabs = page.getByRole('tablist', { name: 'Report tables' });
      await expect(tabs.getByRole('tab')).toHaveCount(3);
      await expect(page.getByRole('tabpanel')).toHaveCount(1);
      // Every nemesis is one summary row (a small card on a phone), its figures folded: with a
      // fresh CI-profile report (twenty nemeses) the page was 6,683 px tall at 1280 and 16,754 px at
      // 390 with every figure of every nemesis on screen, 3,459 px at 1920.
      const rows = page.locator('[data-testid="chaos-nemeses"] [data-nemesis]');
      await expect(rows.first()).toBeVisible();
      const count = await rows.count();
      const tall = await page.evaluate(() => document.documentElement.scrollHeight);
      // A budget per nemesis, so that a report with more of them (a fresh CI run has 25, the shipped
      // reference 20) is judged alike: folded, a nemesis takes ~120 px on a phone and ~45 px wider;
      // unfolded it took ~840 px at 390 and ~330 px at 1280, which these bounds refuse.
      const bound = width === 390 ? 1_000 + 150 * count : 900 + 60 * count;
      expect(tall, `chaos at ${width} px is ${tall} px tall with ${count} nemeses (bound ${bound})`).toBeLessThan(bound);
      const nemeses = page.getByTestId('chaos-nemesis-toggle');
      await expect(nemeses).toHaveCount(count);
      // A nemesis's every figure is one click (or Enter) away, and folds again.
      const first = nemeses.first();
      await expect(first).toHaveAttribute('aria-expanded', 'false');
      await expect(page.getByTestId('chaos-nemesis-detail')).toHaveCount(0);
      await first.focus();
      await page.keyboard.press('Enter');
      await expect(first).toHaveAttribute('aria-expanded', 'true');
      const detail = page.locator(`#${await first.getAttribute('aria-controls')}`);
      await expect(detail).toBeVisible();
      for (const figure of ['Overlaps', 'Fence violations', 'Stale writes unfenced', 'Leftovers', 'Commands / acquisition'])
        await expect(detail.getByText(figure, { exact: true })).toBeVisible();
      await first.click();
      await expect(first).toHaveAttribute('aria-expanded', 'false');
      await expect(detail).toBeHidden();
      for (const name of ['Per nemesis', 'Negative controls', 'Mutants']) {
        if (width !== 390 || name === 'Per nemesis') {
          await tabs.getByRole('tab', { name: new RegExp(name) }).click();
          await expect(page.getByRole('tabpanel')).toContainText(name);
          // The table fits its frame: nothing to scroll to on its right.
          const frame = await page
            .getByRole('tabpanel')
            .locator('[class*="tableWrap"]')
            .first()
            .evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth }));
          expect(frame.scroll, `${name} at ${width} px`).toBeLessThanOrEqual(frame.client + 1);
        }
      }
      await tabs.getByRole('tab').first().click();
      await tabs.getByRole('tab').first().focus();
      await page.keyboard.press('ArrowRight');
      await expect(tabs.getByRole('tab', { name: /Negative controls/ })).toHaveAttribute('aria-selected', 'true');
      await expect(tabs.getByRole('tab', { name: /Negative controls/ })).toBeFocused();
      await noSideways(page, `chaos at ${width} px`);
      await page.keyboard.press('ArrowLeft');
      await saveScreens(page, `names-chaos-${width}`);
      if (width !== 1920) await expectAxeClean(page);
    }
  });
});
