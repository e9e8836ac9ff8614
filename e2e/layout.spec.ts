import type { Page } from '@playwright/test';
import { expect, test } from './support/test';
import { expectAxeClean } from './support/axe';
import { signIn } from './support/login';
import { deleteLocks, randomToken, seedLocks } from './support/seed-locks';

/**
 * Every screen at every width an operator brings: a phone (390), a tablet (768), a small laptop
 * (1024), a laptop (1280) and a desktop (1440). No screen may scroll sideways at any of them; each is axe-clean in
 * both themes at the phone and the desktop width; screenshots of each land in test-results/screens/.
 */
const WIDTHS = [390, 768, 1024, 1280, 1440] as const;
const SHOT_WIDTHS = new Set<number>([390, 1024, 1440]);
const AXE_WIDTHS = new Set<number>([390, 1440]);
const HEIGHT = 900;

const RUN = Date.now().toString(36);
const HELD = `e2e-layout-held-${RUN}`;
const SPLIT = `e2e-layout-split-with-a-long-resource-name/orders/2026/${RUN}`;

const SCREENS: ReadonlyArray<{ name: string; path: string; ready: (page: Page) => Promise<void> }> = [
  { name: 'overview', path: '/', ready: (p) => expect(p.getByTestId('cluster-banner')).toContainText(/Locks can be granted/) },
  { name: 'locks', path: '/locks', ready: (p) => expect(p.getByText(SPLIT).first()).toBeVisible() },
  {
    name: 'lock-detail',
    path: `/locks/${encodeURIComponent(SPLIT)}`,
    ready: (p) => expect(p.getByRole('heading', { level: 1 })).toBeVisible(),
  },
  { name: 'nodes', path: '/nodes', ready: (p) => expect(p.getByTestId('nodes-vote-5')).toBeVisible() },
  { name: 'playground', path: '/playground', ready: (p) => expect(p.getByTestId('acquire-button')).toBeVisible() },
  { name: 'scenarios', path: '/scenarios', ready: (p) => expect(p.getByRole('heading', { level: 1 })).toBeVisible() },
  { name: 'chaos', path: '/chaos', ready: (p) => expect(p.getByRole('heading', { level: 1 })).toBeVisible() },
  { name: 'audit', path: '/audit', ready: (p) => expect(p.getByRole('heading', { level: 1 })).toBeVisible() },
  {
    name: 'api-reference',
    path: '/api-reference',
    ready: (p) => expect(p.getByRole('heading', { level: 1, name: 'redlock-console HTTP API' })).toBeVisible(),
  },
];

/** What sticks out past the right edge of the viewport, for the failure message. */
async function sideways(page: Page): Promise<{ scrollWidth: number; innerWidth: number; culprits: string[] }> {
  return page.evaluate(() => {
    const innerWidth = window.innerWidth;
    const culprits: string[] = [];
    for (const el of Array.from(document.querySelectorAll<HTMLElement>('body *'))) {
      const r = el.getBoundingClientRect();
      const parent = el.parentElement?.getBoundingClientRect();
      // The outermost element that sticks out: its parent still fits.
      if (r.width > 0 && r.right > innerWidth + 1 && (!parent || parent.right <= innerWidth + 1) && culprits.length < 8) {
        const id = el.getAttribute('data-testid') ?? el.className.toString().slice(0, 60);
        culprits.push(`${el.tagName.toLowerCase()}[${id}] right=${Math.round(r.right)}`);
      }
    }
    return { scrollWidth: document.documentElement.scrollWidth, innerWidth, culprits };
  });
}

async function expectNoSideways(page: Page, label: string): Promise<void> {
  const s = await sideways(page);
  expect.soft(s.scrollWidth, `${label} scrolls sideways: ${JSON.stringify(s.culprits)}`).toBeLessThanOrEqual(s.innerWidth);
}

async function shoot(page: Page, name: string): Promise<void> {
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.screenshot({ path: `test-results/screens/layout-${name}-${scheme}.png`, fullPage: true });
  }
  await page.emulateMedia({ colorScheme: null });
}

/** The top of the page (the bar, and an open panel under it) in both themes. */
async function shootTopBar(page: Page, name: string, withPanel = false): Promise<void> {
  const width = page.viewportSize()!.width;
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.screenshot({
      path: `test-results/screens/${name}-${scheme}.png`,
      clip: { x: 0, y: 0, width, height: withPanel ? 260 : 60 },
    });
  }
  await page.emulateMedia({ colorScheme: null });
}

test.describe('every screen at 390, 768, 1024, 1280 and 1440 px', () => {
  test.beforeAll(async () => {
    const [a, b] = [randomToken(), randomToken()];
    await seedLocks([
      {
        resource: HELD,
        token: randomToken(),
        ttlMs: 120_000,
        nodes: [1, 2, 3, 4, 5],
        meta: { owner: 'billing-worker-7', host: 'ip-10-0-3-17' },
      },
      { resource: SPLIT, token: a, ttlMs: 120_000, nodes: [1, 2] },
      { resource: SPLIT, token: b, ttlMs: 120_000, nodes: [3, 4] },
    ]);
  });
  test.afterAll(async () => {
    await deleteLocks([HELD, SPLIT]);
  });

  test('the browser finds an icon: /favicon.ico and the linked SVG both answer', async ({ page }) => {
    const ico = await page.request.get('/favicon.ico');
    expect(ico.status()).toBe(200);
    expect(ico.headers()['content-type']).toMatch(/image\/(x-icon|vnd\.microsoft\.icon)/);
    await page.goto('/login');
    const href = await page.locator('link[rel="icon"][type="image/svg+xml"]').getAttribute('href');
    const svg = await page.request.get(href!);
    expect(svg.status()).toBe(200);
    expect(await svg.text()).toContain('<svg');
  });

  test('the login screen', async ({ page }) => {
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: HEIGHT });
      await page.goto('/login');
      await expect(page.getByRole('button', { name: 'Sign in' })).toBeVisible();
      await expectNoSideways(page, `login at ${width} px`);
      if (SHOT_WIDTHS.has(width)) await shoot(page, `login-${width}`);
      if (AXE_WIDTHS.has(width)) await expectAxeClean(page);
    }
  });

  for (const screen of SCREENS) {
    test(`${screen.name}: no sideways scrolling, axe-clean, screenshots`, async ({ page }) => {
      test.slow();
      await signIn(page);
      for (const width of WIDTHS) {
        await page.setViewportSize({ width, height: HEIGHT });
        await page.goto(screen.path);
        await screen.ready(page);
        await expectNoSideways(page, `${screen.name} at ${width} px`);
        if (SHOT_WIDTHS.has(width)) await shoot(page, `${screen.name}-${width}`);
        if (AXE_WIDTHS.has(width)) await expectAxeClean(page, screen.ready);
      }
    });
  }

  test('the navigation folds into a menu on a phone, and every screen is reachable from it by keyboard', async ({ page }) => {
    await signIn(page);
    await page.setViewportSize({ width: 390, height: HEIGHT });
    await page.goto('/');
    const nav = page.getByRole('navigation', { name: 'Main' });
    await expect(nav.getByRole('link', { name: 'Locks' })).toBeHidden();
    const toggle = page.getByRole('button', { name: 'Menu' });
    await expect(toggle).toHaveAttribute('aria-expanded', 'false');
    await toggle.focus();
    await page.keyboard.press('Enter');
    await expect(toggle).toHaveAttribute('aria-expanded', 'true');
    await expect(nav.getByRole('link', { name: 'Locks' })).toBeVisible();
    await expectNoSideways(page, 'the open menu at 390 px');
    await shoot(page, 'menu-open-390');
    await expectAxeClean(page);
    await nav.getByRole('link', { name: 'Nodes' }).focus();
    await page.keyboard.press('Enter');
    await expect(page).toHaveURL(/\/nodes$/);
    // Following a link closes the menu; Escape closes it too, and focus goes back to the toggle.
    await expect(toggle).toHaveAttribute('aria-expanded', 'false');
    await toggle.click();
    await page.keyboard.press('Escape');
    await expect(toggle).toHaveAttribute('aria-expanded', 'false');
    await expect(toggle).toBeFocused();
    // Sign out is on the bar where there is room for it, and in the menu where there is not. The
    // navigation is on the bar from 1240 px: a 1280 px laptop sees it, with room to spare.
    const signOut = page.getByText('Sign out', { exact: true });
    const locks = nav.getByRole('link', { name: 'Locks' });
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: HEIGHT });
      if (width >= 1280) await expect(locks).toBeInViewport();
      else await expect(locks).toBeHidden();
      if (width < 900) {
        await expect(signOut).toBeHidden();
        await toggle.click();
      }
      await expect(signOut).toBeInViewport();
      if (width < 900) await page.keyboard.press('Escape');
      if (width >= 1280) await shootTopBar(page, `topbar-${width}`);
      if (width === 1280) {
        // The free space between the navigation and the tools, were a 15 px classic scrollbar there.
        const spare = await page.evaluate(() => {
          const navBox = document.querySelector('.nav')!.getBoundingClientRect();
          const tools = document.querySelector('.topbar-tools')!.getBoundingClientRect();
          const gap = parseFloat(getComputedStyle(document.querySelector('.topbar')!).columnGap);
          const scrollbar = window.innerWidth - document.documentElement.clientWidth;
          return tools.left - navBox.right - gap - (15 - scrollbar);
        });
        expect(spare, 'spare room on the top bar at 1280 px').toBeGreaterThanOrEqual(40);
      }
    }
  });

  test('the Sign out panel says who is signed in, as what, on which cluster; keyboard and axe', async ({ page }) => {
    await signIn(page);
    await page.setViewportSize({ width: 1280, height: HEIGHT });
    await page.goto('/');
    const menu = page.getByTestId('user-menu');
    // On the bar: the mode in one word (the whole phrase for screen readers) and the name.
    await expect(page.getByTestId('mode-badge')).toHaveText('sandbox cluster');
    await expect(menu.getByText('e2e-operator', { exact: true }).first()).toBeVisible();
    await expect(page.getByTestId('role-badge')).toBeHidden();
    const summary = menu.locator('summary', { hasText: 'Sign out' });
    await summary.focus();
    await page.keyboard.press('Enter');
    const panel = page.getByRole('group', { name: 'Sign out' });
    await expect(panel.getByTestId('role-badge')).toBeVisible();
    await expect(panel.getByTestId('role-badge')).toHaveText('operator');
    await expect(panel).toContainText('On the sandbox cluster');
    await expect(panel).toBeInViewport({ ratio: 1 });
    await shootTopBar(page, 'topbar-sign-out-1280', true);
    await expectAxeClean(page);
    await page.keyboard.press('Escape');
    await expect(page.getByTestId('role-badge')).toBeHidden();
  });
});
