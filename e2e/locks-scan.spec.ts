import type { Page } from '@playwright/test';
import { expect, test } from './support/test';
import { signIn } from './support/login';
import { saveScreens } from './support/screens';
import { sandbox } from './support/sandbox';
import { deleteLocks, randomToken, seedLocks } from './support/seed-locks';

const ALL = [1, 2, 3, 4, 5];
const unique = () => `${Date.now().toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`;

/** What the matrix shows at one moment (read in one go, so the state cannot change halfway). */
function matrixState(page: Page) {
  return page.evaluate(() => {
    const matrix = document.querySelector('[data-testid="lock-matrix"]') as HTMLElement | null;
    const rows = [...document.querySelectorAll<HTMLElement>('[data-testid="lock-row"]')];
    return {
      scan: matrix?.dataset.scan ?? null,
      banner: document.querySelector('[data-testid="locks-scanning"]') !== null,
      rows: rows.map((r) => r.dataset.resource),
      states: rows.map((r) => r.dataset.state),
      node3: rows.map((r) => (r.querySelector('[data-testid="lock-cell"][data-node="3"]') as HTMLElement | null)?.dataset.present ?? null),
      total: document.querySelector('[data-testid="state-count-all"]')?.textContent ?? null,
      readAt: document.querySelector('[data-testid="locks-read-at"]')?.textContent ?? null,
    };
  });
}

test.describe('locks: a scan that takes a while', () => {
  test.beforeEach(async ({ page }) => {
    await signIn(page);
  });

  test('the first rows show before the scan ends, exact and flagged as still scanning; the full list follows', async ({ page }) => {
    const base = `e2e-scan/${unique()}/`;
    const resources = ['a', 'b', 'c'].map((r) => `${base}${r}`);
    await seedLocks(resources.map((resource) => ({ resource, token: randomToken(), ttlMs: 60_000, nodes: ALL })));
    const control = sandbox();
    // A paused node holds every scan up until its reads time out (the console's 1 s command
    // timeout): long enough to see the early page, if it is read in one go (two reads one after the
    // other can straddle its end on a loaded machine). The screen's request must start a snapshot
    // of its own: a running one is shared and a finished one reused for 1 s (inspect-service.ts),
    // so nothing may be polling the locks meanwhile (the overview the sign-in lands on does), and
    // any snapshot started before the pause must have ended (≤ 1 s) and aged out (1 s).
    await page.goto('about:blank');
    await control.act(3, { action: 'pause' });
    try {
      // The early page lasts about 1 s. On a loaded machine the page can render after the scan
      // ended (seen in a clean-clone run beside a mutation run): then nothing about the early page
      // was shown or hidden wrongly, only seen too late. Look again, up to three times; a page that
      // is never early, or early and wrong, still fails.
      // Early: every row read directly on every node (node 3 does not answer: unknown), four of
      // five hold each token (held), totals not known yet.
      const earlyPage = {
        scan: 'scanning',
        banner: true,
        rows: resources,
        states: ['held', 'held', 'held'],
        node3: ['unknown', 'unknown', 'unknown'],
        total: '…',
        readAt: expect.stringContaining('scanning…'),
      };
      for (let look = 1; ; look++) {
        await page.goto('about:blank');
        // pace: any snapshot before the pause has ended and aged out (≤ 1 s + 1 s, see above)
        await page.waitForTimeout(2_200);
        await page.goto(`/locks?prefix=${encodeURIComponent(base)}`);
        try {
          await expect.poll(() => matrixState(page), { timeout: 5_000, intervals: [50] }).toEqual(earlyPage);
          break;
        } catch (err) {
          // Only a scan already over excuses a miss; anything else is the failure it looks like.
          if (look === 3 || (await matrixState(page)).scan !== 'complete') throw err;
        }
      }
      // One theme only: the early page lasts about the 1 s the scan waits for node 3.
      await page.screenshot({ path: 'test-results/screens/locks-scanning-light.png', fullPage: true });
      // The scan gives up on node 3; the full first page replaces the early one by itself.
      await expect(page.getByTestId('lock-matrix')).toHaveAttribute('data-scan', 'complete', { timeout: 10_000 });
      await expect(page.getByTestId('locks-scanning')).toHaveCount(0);
      await expect(page.getByTestId('unreadable-nodes')).toContainText('Node 3 could not be read');
      await expect(page.getByTestId('lock-row')).toHaveCount(3);
      await expect(page.getByTestId('state-count-all')).not.toHaveText('…');
      // Node 3 was not read: a lock whose keys are only there could exist, so the total is a floor.
      await expect(page.getByTestId('locks-matched')).toHaveText('≥ 3');
      await saveScreens(page, 'locks-after-slow-scan');
    } finally {
      await control.act(3, { action: 'resume' });
      await page.goto('about:blank');
      await deleteLocks(resources);
    }
  });
});
