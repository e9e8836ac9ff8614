import { rwIntentKey, rwSlotKey, semaphoreSlotKey, lockValue, tokenOf } from '@redlock-console/redlock';
import type { Page } from '@playwright/test';
import { expectAxeClean } from './support/axe';
import { signIn } from './support/login';
import { saveScreens } from './support/screens';
import { expectStackedCards } from './support/stacked-table';
import { AS_CLIENT, postAsSession } from './support/ops';
import { deleteRawKeys, nodeClients, randomToken, seedRawKeys } from './support/seed-locks';
import { expect, test } from './support/test';

const KEY_PREFIX = process.env.REDLOCK_KEY_PREFIX ?? 'rl:';
const ALL = [1, 2, 3, 4, 5];
const unique = () => `${Date.now().toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`;
const value = (token: string, meta: Record<string, string>) => lockValue(token, JSON.stringify(meta));

/** Each node's token at `key` (null where absent). */
async function tokensAt(key: string): Promise<Array<string | null>> {
  const clients = await nodeClients();
  try {
    const values = await Promise.all(clients.map((c) => c.get(key)));
    return values.map((v) => (v === null ? null : tokenOf(v)));
  } finally {
    clients.forEach((c) => c.disconnect());
  }
}

/** Nothing wider than the viewport: no sideways scrolling. */
async function expectNoSidewaysScroll(page: Page): Promise<void> {
  const { scroll, client } = await page.evaluate(() => ({
    scroll: document.documentElement.scrollWidth,
    client: document.documentElement.clientWidth,
  }));
  expect(scroll, 'page wider than the viewport').toBeLessThanOrEqual(client);
}

test.describe('semaphores and read-write locks in the console', () => {
  test('listed by kind, a semaphore in detail (slot × node), one permit force-released; axe-clean, no sideways scroll at 320 px', async ({
    page,
  }) => {
    test.slow(); // screenshots in both themes at three widths, on a busy machine
    const sem = `e2e-sem-${unique()}`;
    const rw = `e2e-rw-${unique()}`;
    const [a, b, r1, r2, intent] = [randomToken(), randomToken(), randomToken(), randomToken(), randomToken()];
    // Written straight to the masters (the e2e lease ceiling, 5 s, is shorter than a test): permit A
    // holds slots 0 and 1 of a 3-permit semaphore, permit B slot 2; two readers and a waiting writer.
    const keys = [
      {
        key: semaphoreSlotKey(KEY_PREFIX, sem, 0),
        value: value(a, { owner: 'etl-a', limit: '3', fence: '41' }),
        ttlMs: 120_000,
        nodes: ALL,
      },
      {
        key: semaphoreSlotKey(KEY_PREFIX, sem, 1),
        value: value(a, { owner: 'etl-a', limit: '3', fence: '41' }),
        ttlMs: 120_000,
        nodes: ALL,
      },
      {
        key: semaphoreSlotKey(KEY_PREFIX, sem, 2),
        value: value(b, { owner: 'etl-b', limit: '3', fence: '42' }),
        ttlMs: 120_000,
        nodes: ALL,
      },
      { key: rwSlotKey(KEY_PREFIX, rw, 0), value: value(r1, { owner: 'report-1', limit: '4', rw: 'read' }), ttlMs: 120_000, nodes: ALL },
      { key: rwSlotKey(KEY_PREFIX, rw, 1), value: value(r2, { owner: 'report-2', limit: '4', rw: 'read' }), ttlMs: 120_000, nodes: ALL },
      {
        key: rwIntentKey(KEY_PREFIX, rw),
        value: value(intent, { owner: 'migrator', limit: '4', rw: 'intent' }),
        ttlMs: 120_000,
        nodes: [1, 2, 3],
      },
    ];
    await seedRawKeys(keys);
    try {
      await signIn(page);

      // Every kind: the matrix, then the semaphores and read-write locks, each marked by kind.
      await page.goto('/locks');
      const semRow = page.locator(`[data-testid="slot-lock-row"][data-resource="${sem}"]`);
      const rwRow = page.locator(`[data-testid="slot-lock-row"][data-resource="${rw}"]`);
      await expect(semRow).toHaveAttribute('data-kind', 'semaphore');
      await expect(semRow.getByTestId('slot-held')).toHaveText('3/3 permits');
      await expect(semRow.getByTestId('kind-badge')).toHaveText('Semaphore');
      await expect(rwRow.getByTestId('slot-held')).toHaveText('2 readers');
      await expect(rwRow.getByTestId('slot-notes')).toContainText('writer waiting (migrator)');
      await saveScreens(page, 'locks-all-kinds');

      // The filter by kind, from the keyboard: semaphores alone (kept in the address), then RW locks alone.
      await page
        .getByTestId('kind-filter')
        .getByRole('button', { name: /^Semaphores/ })
        .focus();
      await page.keyboard.press('Enter');
      await expect(page).toHaveURL(/[?&]kind=semaphore/);
      await expect(page.getByTestId('lock-matrix')).toHaveCount(0);
      await expect(semRow).toBeVisible();
      await expect(rwRow).toHaveCount(0);
      await expectAxeClean(page);
      await saveScreens(page, 'semaphores-list');
      await page
        .getByTestId('kind-filter')
        .getByRole('button', { name: /^RW locks/ })
        .click();
      await expect(rwRow).toBeVisible();
      await expect(semRow).toHaveCount(0);
      await saveScreens(page, 'rwlocks-list');
      // The RW lock's detail: two readers, and the waiting writer's intent as a row of its own.
      await rwRow.getByRole('link', { name: rw }).click();
      const rwDetail = page.getByTestId('slot-lock-detail');
      await expect(rwDetail.getByTestId('slot-held')).toHaveText('2 readers');
      await expect(rwDetail.locator('[data-testid="slot-row"][data-slot="intent"]')).toHaveAttribute('data-state', 'held');
      await expect(rwDetail.locator('[data-testid="slot-holder-row"]')).toHaveCount(3);
      await expectAxeClean(page);
      await saveScreens(page, 'rwlock-detail');

      // The semaphore's detail: a row per slot, a column per node, each cell the token there.
      await page.goto(`/locks?kind=semaphore`);
      await semRow.getByRole('link', { name: sem }).focus();
      await page.keyboard.press('Enter');
      const detail = page.getByTestId('slot-lock-detail');
      await expect(detail).toHaveAttribute('data-loading-state', 'ready');
      await expect(detail.getByTestId('slot-held')).toHaveText('3/3 permits');
      const slotRow = (slot: number) => detail.locator(`[data-testid="slot-row"][data-slot="${slot}"]`);
      await expect(slotRow(1)).toHaveAttribute('data-state', 'held');
      await expect(slotRow(1).locator(`[data-testid="slot-cell"][data-token="${a}"]`)).toHaveCount(5);
      await expect(slotRow(2).locator(`[data-testid="slot-cell"][data-token="${b}"]`)).toHaveCount(5);
      await expect(slotRow(1)).toContainText('fence 41');
      await expectAxeClean(page);
      await saveScreens(page, 'semaphore-detail');

      // Force-release slot 1 of permit A: a reason, the name typed, then each node's outcome.
      await detail.getByRole('button', { name: 'Force-release slot 1' }).click();
      const dialog = page.getByTestId('slot-release-dialog');
      await expect(dialog).toBeVisible();
      const confirm = dialog.getByTestId('slot-release-confirm');
      await dialog.getByLabel(/Reason/).fill('e2e: worker died holding its permit');
      await expect(confirm).toBeDisabled();
      await dialog.getByLabel(/to confirm/).fill(sem);
      await expect(confirm).toBeEnabled();
      await expectAxeClean(page);
      await saveScreens(page, 'semaphore-release-dialog');
      await confirm.click();
      const result = dialog.getByTestId('slot-release-result');
      await expect(result).toHaveAttribute('data-deleted', '5');
      await expect(result.locator('[data-outcome="deleted"]')).toHaveCount(5);
      await saveScreens(page, 'semaphore-release-result');
      await dialog.getByRole('button', { name: 'Done' }).click();
      await expect(detail.getByTestId('slot-held')).toHaveText('2/3 permits');
      await expect(slotRow(1)).toHaveAttribute('data-state', 'free');
      // Only that slot's keys: permit A's other slot and permit B are untouched.
      expect(await tokensAt(semaphoreSlotKey(KEY_PREFIX, sem, 1))).toEqual([null, null, null, null, null]);
      expect(await tokensAt(semaphoreSlotKey(KEY_PREFIX, sem, 0))).toEqual([a, a, a, a, a]);
      expect(await tokensAt(semaphoreSlotKey(KEY_PREFIX, sem, 2))).toEqual([b, b, b, b, b]);

      // Phones: the list and the detail fit 320 px (tables become cards).
      await page.setViewportSize({ width: 320, height: 800 });
      await expect(detail.getByTestId('slot-held')).toBeVisible();
      await expectNoSidewaysScroll(page);
      await saveScreens(page, 'semaphore-detail-320');
      await page.goto('/locks?kind=semaphore');
      await expect(semRow.getByTestId('slot-held')).toHaveText('2/3 permits');
      await expectNoSidewaysScroll(page);
      await expectAxeClean(page);
      await saveScreens(page, 'semaphores-list-320');
    } finally {
      await deleteRawKeys(keys.map((k) => k.key));
    }
  });
  test('the History section: a permit released, another force-released, each with its slot; keyboard, axe-clean, 320 px', async ({
    page,
  }) => {
    test.slow(); // screenshots in both themes at three widths, on a busy machine
    const sem = `e2e-semh-${unique()}`;
    await signIn(page);
    const take = async (owner: string) => {
      const res = await page.request.post('/api/semaphores', {
        headers: AS_CLIENT,
        data: { resource: sem, limit: 3, ttlMs: 5_000, metadata: { owner } },
      });
      expect(res.status()).toBe(200);
      return (await res.json()) as { token: string; slots: number[]; fence: number | null };
    };
    // Permit A through the lock service, released by its holder; permit B force-released by the operator.
    const a = await take('e2e-history-a');
    const released = await page.request.post(`/api/semaphores/${sem}/release`, {
      headers: AS_CLIENT,
      data: { token: a.token, slots: a.slots },
    });
    expect(((await released.json()) as { released: boolean }).released).toBe(true);
    const b = await take('e2e-history-b');
    const forced = await postAsSession(page, `/api/slot-locks/semaphore/${sem}/force-release`, {
      token: b.token,
      slot: b.slots[0],
      reason: 'e2e: the history shows this',
    });
    expect(forced.status()).toBe(200);

    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`/locks/${sem}?kind=semaphore`);
    const history = page.getByTestId('slot-history');
    await expect(history).toHaveAttribute('data-loading-state', 'ready');
    const row = (ended: string) => history.locator(`[data-testid="history-hold"][data-ended="${ended}"]`);
    await expect(row('released').getByTestId('slot-history-slots')).toHaveAttribute('data-slots', a.slots.join(','));
    await expect(row('released')).toContainText(`slot ${a.slots[0]}`);
    await expect(row('released')).toContainText('client:e2e-client');
    await expect(row('released')).toContainText('e2e-history-a');
    await expect(row('force-released').getByTestId('slot-history-slots')).toHaveAttribute('data-slots', b.slots.join(','));
    await expect(row('force-released')).toContainText(`slot ${b.slots[0]}`);
    await expect(row('force-released')).toContainText('e2e-history-b');
    if (b.fence !== null) await expect(row('force-released')).toContainText(String(b.fence));
    // Newest first: the force-released permit above the released one.
    await expect(history.getByTestId('history-hold').first()).toHaveAttribute('data-ended', 'force-released');
    await expectAxeClean(page);
    await saveScreens(page, 'semaphore-history');

    // No key is left, so the limit is unknown: the pages of a 256-slot semaphore, from the keyboard.
    const picker = history.getByLabel('Slots', { exact: true });
    await picker.focus();
    await page.keyboard.press('ArrowDown');
    await expect(picker).toHaveValue('page-1');
    await expect(history).toContainText('Nothing recorded on slots 16–31');
    await page.keyboard.press('ArrowUp');
    await expect(row('released')).toBeVisible();

    for (const width of [390, 320]) {
      await page.setViewportSize({ width, height: 800 });
      await expect(row('force-released')).toBeVisible();
      // Cards, as the mutex's History (one table for both): nothing scrolls inside the region either.
      await expectStackedCards(
        page,
        history.getByRole('region', { name: "History of the slots' holds" }),
        ['Granted', 'Slot', 'Authenticated as', 'Claims to be', 'Fence', 'Held for', 'Ended'],
        2,
      );
      await saveScreens(page, `semaphore-history-${width}`);
    }
    await expectAxeClean(page);
  });
});
