import type { Page } from '@playwright/test';
import { expect, test } from './support/test';
import { signIn } from './support/login';
import { acquire, AS_CLIENT, postAsSession } from './support/ops';
import { deleteLocks, randomToken, seedLocks, seedManyLocks } from './support/seed-locks';

/**
 * Both streams of a lock's page are open: the top bar's (every change; its dot reads "live") and the
 * page's own (the lock's changes; "● live" beside its events). The server subscribes a stream before
 * it sends the headers, so from here on no change is missed.
 */
async function streamsConnected(page: Page): Promise<void> {
  await expect(page.getByTestId('live-status')).toHaveAttribute('data-state', 'live', { timeout: 10_000 });
  await expect(page.getByText('● live')).toBeVisible({ timeout: 10_000 });
}

const unique = () => `${Date.now().toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`;

/**
 * Live events under a flood of lock changes: a screen that follows every
 * change gets a summary past 64 changes a window (lock.burst) and refreshes its lists; the lock
 * detail page follows its own lock (`/api/events?resource=`) and still lists each of its changes.
 */
test.describe('live events', () => {
  test.beforeEach(async ({ page }) => {
    await signIn(page);
  });

  test('the lock detail lists its own grant and release while 300 other locks change around it', async ({ page }) => {
    const resource = `e2e-live/${unique()}`;
    const follows = page.waitForRequest((r) => r.url().endsWith(`/api/events?resource=${encodeURIComponent(resource)}`));
    await page.goto(`/locks/${encodeURIComponent(resource)}`);
    await follows; // the page follows its own lock, not the stream of everything
    // The detail page opened its own stream for this resource (and the top bar its stream of everything).
    await expect(page.getByTestId('lock-events-empty')).toBeVisible();
    await streamsConnected(page);
    // The grant and the release land among 300 other changes each (more than a window lists one
    // by one to a stream of everything: they would be inside a lock.burst there).
    const floodName = `e2e-live-flood/${unique()}/`;
    const [flood, granted] = await Promise.all([seedManyLocks(floodName, 300, 30_000), acquire(page, resource)]);
    expect(granted.status(), await granted.text()).toBe(200);
    const { token } = (await granted.json()) as { token: string };
    const events = page.getByTestId('lock-events');
    await expect(events.locator('[data-type="lock.granted"]')).toHaveCount(1, { timeout: 10_000 });
    const [, released] = await Promise.all([
      deleteLocks(flood),
      page.request.post(`/api/locks/${encodeURIComponent(resource)}/release`, { headers: AS_CLIENT, data: { token } }),
    ]);
    expect(released.status()).toBe(200);
    await expect(events.locator('[data-type="lock.released"]')).toHaveCount(1, { timeout: 10_000 });
    // Only this lock's changes are listed here: none of the flood's, and no summary.
    await expect(events.locator('li')).toHaveCount(2);
  });

  test('one force-release is one event on the lock detail: force-released, not released beside it', async ({ page }) => {
    const resource = `e2e-live-fr/${unique()}`;
    const token = randomToken();
    await seedLocks([{ resource, token, ttlMs: 60_000, nodes: [1, 2, 3, 4, 5] }]);
    const follows = page.waitForRequest((r) => r.url().endsWith(`/api/events?resource=${encodeURIComponent(resource)}`));
    await page.goto(`/locks/${encodeURIComponent(resource)}`);
    await follows;
    await expect(page.getByTestId('lock-events-empty')).toBeVisible();
    await streamsConnected(page);
    const res = await postAsSession(page, `/api/locks/${encodeURIComponent(resource)}/force-release`, { token, reason: 'e2e: one event' });
    expect(res.status(), await res.text()).toBe(200);
    const events = page.getByTestId('lock-events');
    await expect(events.locator('[data-type="lock.force-released"]')).toHaveCount(1, { timeout: 10_000 });
    // Past the masters' reports of the deletes (folded into the force-release for 3 s after it).
    // absence: past the 3 s in which the masters' reports of the deletes are folded into the force-release, +1 s
    await page.waitForTimeout(4_000);
    await expect(events.locator('[data-type="lock.released"]')).toHaveCount(0);
    await expect(events.locator('li')).toHaveCount(1);
  });

  test('a stream of every change summarises a flood: one lock.burst with the counts, not 300 events', async ({ page }) => {
    await page.goto('/');
    const seen = page.evaluate(
      () =>
        new Promise<{ bursts: number; granted: number; single: number }>((resolve) => {
          const source = new EventSource('/api/events');
          let bursts = 0;
          let granted = 0;
          let single = 0;
          source.onopen = () => document.documentElement.setAttribute('data-e2e-stream', 'open');
          source.addEventListener('lock.burst', (m) => {
            bursts++;
            granted += (JSON.parse((m as MessageEvent<string>).data) as { counts: Record<string, number> }).counts['lock.granted'] ?? 0;
          });
          source.addEventListener('lock.granted', () => {
            single++;
            granted++;
          });
          setTimeout(() => {
            source.close();
            resolve({ bursts, granted, single });
          }, 4_000);
        }),
    );
    // The stream is open (the server subscribes it before it sends the headers): no change is missed.
    await expect(page.locator('html')).toHaveAttribute('data-e2e-stream', 'open');
    const flood = await seedManyLocks(`e2e-burst/${unique()}/`, 300, 30_000);
    const result = await seen;
    await deleteLocks(flood);
    expect(result.bursts).toBeGreaterThanOrEqual(1);
    expect(result.granted).toBeGreaterThanOrEqual(300); // every grant reported, in a burst or one by one
    expect(result.single).toBeLessThan(300);
  });
});
