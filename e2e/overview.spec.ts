import type { Page } from '@playwright/test';
import { expect, test } from './support/test';
import { expectAxeClean } from './support/axe';
import { signIn } from './support/login';
import { acquire, AS_CLIENT, restoreNode } from './support/ops';
import { sandbox } from './support/sandbox';
import { saveScreens } from './support/screens';

/** Lock traffic through the lock service as the e2e API-key client: grants, then one contended failure. */
async function lockTraffic(page: Page, prefix: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const res = await page.request.post('/api/locks', {
      headers: AS_CLIENT,
      data: { resource: `${prefix}-${i}`, ttlMs: 5_000, metadata: { owner: 'e2e-overview' } },
    });
    expect(res.status(), await res.text()).toBe(200);
  }
  const contended = await page.request.post('/api/locks', { headers: AS_CLIENT, data: { resource: `${prefix}-0`, ttlMs: 5_000 } });
  expect(contended.status(), await contended.text()).toBe(409);
}

test.describe('overview: can locks be granted, and what every master says', () => {
  test.beforeEach(async ({ page }) => {
    await signIn(page);
  });

  test('five masters up, the banner says why, lock totals and charts fill in from real traffic', async ({ page }) => {
    await page.goto('/');
    const banner = page.getByTestId('cluster-banner');
    await expect(banner).toContainText('Locks can be granted');
    await expect(banner).toContainText('5 of 5 masters reachable · 5 usable · quorum 3');
    await expect(banner).toContainText('2 more nodes can fail before new locks stop');
    await expect(banner).toHaveAttribute('data-state', 'grantable');
    await expect(page.getByTestId('banner-read-age')).toHaveText(/^read \d+\.\d s ago$/);

    await expect(page.getByTestId(/^node-card-\d+$/)).toHaveCount(5);
    for (let id = 1; id <= 5; id++) {
      await expect(page.getByTestId(`node-state-${id}`)).toHaveText('up');
      await expect(page.getByTestId(`node-quarantine-${id}`)).toHaveAttribute('data-state', 'votes');
      const card = page.getByTestId(`node-card-${id}`);
      await expect(card).toContainText('AOF always');
      await expect(card).toContainText('noeviction');
      await expect(page.getByTestId(`node-verdict-${id}`)).toHaveAttribute('data-level', 'ok');
    }

    const prefix = `e2e-ov-${Date.now()}`;
    await lockTraffic(page, prefix, 6);
    // The totals come from the lock list's snapshot: at least our six are held right now.
    await expect
      .poll(async () => Number((await page.getByTestId('lock-total-held-value').textContent())?.replace(/\D/g, '')), { timeout: 5_000 })
      .toBeGreaterThanOrEqual(6);

    for (const chart of ['chart-latency', 'chart-outcomes', 'chart-rtt', 'chart-locks']) {
      await expect(page.getByTestId(chart)).toHaveAttribute('data-loading-state', 'ready', { timeout: 10_000 });
      await expect(page.getByTestId(chart).locator('svg.recharts-surface').first()).toBeVisible();
    }
    await expect(page.getByTestId('chart-outcomes')).toContainText(/seen · console granted \/ failed/);
    await saveScreens(page, 'overview');
  });

  test('skeletons hold the place of the cards, so nothing shifts when the first readings land, in either order', async ({ page }) => {
    // The masters' cards and the lock totals above them load apart: hold both, then let the totals
    // land first (the order a slow /api/nodes gives), then the cards.
    const gate = () => {
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      return { held, release };
    };
    const nodes = gate();
    const totals = gate();
    await page.route('**/api/nodes', async (route) => {
      await nodes.held;
      await route.continue();
    });
    await page.route('**/api/locks?limit=1', async (route) => {
      await totals.held;
      await route.continue();
    });
    await page.goto('/');
    const skeletons = page.getByTestId('node-card-skeleton');
    await expect(skeletons).toHaveCount(5);
    await expect(page.getByTestId('node-cards')).toHaveAttribute('data-loading-state', 'loading');
    await expect(page.getByTestId('lock-totals')).toHaveAttribute('data-loading-state', 'loading');
    const before = await skeletons.first().boundingBox();
    totals.release();
    await expect(page.getByTestId('lock-totals')).toHaveAttribute('data-loading-state', 'ready');
    await expect(page.getByTestId('lock-flag-no-ttl')).toHaveAttribute('data-count', /\d+/);
    const between = await skeletons.first().boundingBox();
    nodes.release();
    await expect(page.getByTestId('node-card-1')).toBeVisible();
    const after = await page.getByTestId('node-card-1').boundingBox();
    expect(before && between && after).toBeTruthy();
    expect(Math.abs(between!.y - before!.y)).toBeLessThanOrEqual(1);
    expect(Math.abs(after!.y - before!.y)).toBeLessThanOrEqual(1);
    expect(Math.abs(after!.height - before!.height)).toBeLessThanOrEqual(1);
    expect(Math.abs(after!.width - before!.width)).toBeLessThanOrEqual(1);
  });

  test('when only quarantines stand in the way, the banner says so and counts down to the first grantable moment', async ({ page }) => {
    // Three restarts, a quarantine to sit out and three restores: on a slow two-core machine this takes longer than most tests.
    test.slow();
    const control = sandbox();
    const ids = [1, 2, 3];
    try {
      await page.goto('/');
      await expect(page.getByTestId('cluster-banner')).toHaveAttribute('data-state', 'grantable');
      // Three nodes come back empty: no epoch sentinel, so they cannot be counted on.
      for (const id of ids) await control.act(id, { action: 'restart', persistence: 'none' });
      const banner = page.getByTestId('cluster-banner');
      await expect(banner).toHaveAttribute('data-state', 'blocked', { timeout: 5_000 });
      await expect(banner).toContainText('Locks cannot be granted');
      await expect(banner).toContainText('has no epoch sentinel');
      await saveScreens(page, 'overview-blocked');
      // Cards with safety reasons: the button that opens them says what it shows (its name starts with its visible words).
      const more = page.getByTestId('node-verdict-1').getByRole('button');
      await expect(more).toHaveAccessibleName(/^(All \d+ safety reasons|Safety details) for node 1$/);
      await expectAxeClean(page);
      await more.click();
      await expect(page.getByRole('dialog', { name: /^Node 1:/ })).toBeVisible();
      await page.keyboard.press('Escape');
      await expect(more).toBeFocused();
      // The next acquire quarantines them (and fails: only two nodes may vote for it)…
      expect((await acquire(page, `e2e-grantable-${Date.now()}`)).status()).not.toBe(200);
      // …which turns "cannot" into "not yet": the verdict knows when the quarantines end.
      await expect(banner).toHaveAttribute('data-state', 'waiting', { timeout: 3_000 });
      await expect(banner).toContainText('Locks cannot be granted yet');
      await expect(banner).toContainText('Only quarantines stand in the way');
      const seconds = async () => Number((await page.getByTestId('grantable-in').textContent())?.replace(/[^\d.]/g, ''));
      const first = await seconds();
      expect(first).toBeGreaterThan(0);
      await expect.poll(seconds, { timeout: 4_000 }).toBeLessThan(first - 0.25);
      await saveScreens(page, 'overview-waiting');
      await expect(banner).toHaveAttribute('data-state', 'grantable', { timeout: 10_000 });
    } finally {
      for (const id of ids) await restoreNode(page, id);
    }
  });

  test('a failing history read is an error state on every chart, not a crash', async ({ page }) => {
    await page.route('**/api/history?*', (route) =>
      route.fulfill({
        status: 503,
        contentType: 'application/json',
        body: JSON.stringify({ error: { code: 'UNAVAILABLE', message: 'history is unavailable (test)' } }),
      }),
    );
    await page.goto('/');
    for (const chart of ['chart-latency', 'chart-outcomes', 'chart-rtt', 'chart-locks']) {
      await expect(page.getByTestId(chart)).toHaveAttribute('data-loading-state', 'error', { timeout: 10_000 });
      await expect(page.getByTestId(chart).getByRole('alert')).toContainText('history is unavailable (test)');
    }
    // The rest of the screen still works.
    await expect(page.getByTestId('cluster-banner')).toContainText('Locks can be granted');
  });

  test('the charts reach back 24 hours in one-minute buckets', async ({ page }) => {
    await page.goto('/');
    const picker = page.getByRole('group', { name: 'Time window' });
    await picker.getByRole('button', { name: '24 h' }).click();
    await expect(picker.getByRole('button', { name: '24 h' })).toHaveAttribute('aria-pressed', 'true');
    await expect(page.getByTestId('history-resolution')).toContainText('1 min buckets, kept 24 h');
    // Lock counts and node RTTs are in the minute buckets (the sampler alone fills them: test/integration/history-sampler.test.ts).
    await expect(page.getByTestId('chart-locks')).toHaveAttribute('data-loading-state', 'ready', { timeout: 10_000 });
    await expect(page.getByTestId('chart-rtt')).toHaveAttribute('data-loading-state', 'ready');
    await saveScreens(page, 'overview-24h');
  });
});
