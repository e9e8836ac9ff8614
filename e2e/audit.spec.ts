import { readFileSync } from 'node:fs';
import { expect, test } from './support/test';
import { AUDIT_CSV_COLUMNS } from '../lib/api/audit';
import { signIn } from './support/login';
import { postAsSession } from './support/ops';
import { saveScreens } from './support/screens';

test.describe('audit log: who did what, filtered, paged, exported', () => {
  test.beforeEach(async ({ page }) => {
    await signIn(page);
  });

  test('node actions taken on the Nodes screen are audited with their before and after, and export as CSV and JSON', async ({ page }) => {
    // Two actions through the UI: add latency to node 4, then take it away.
    await page.goto('/nodes');
    await page.getByRole('button', { name: 'Add latency node 4' }).click();
    const dialog = page.getByTestId('action-dialog');
    await dialog.getByLabel('Latency (ms, round trip)').fill('40');
    await dialog.getByLabel('Jitter (ms, random extra)').fill('10');
    await dialog.getByRole('button', { name: 'Add latency to node 4', exact: true }).click();
    await expect(dialog).toBeHidden();
    await expect(page.getByTestId('node-row-4')).toHaveAttribute('data-state', 'slow', { timeout: 5_000 });
    await page.getByRole('button', { name: 'Remove latency node 4' }).click();
    await dialog.getByRole('button', { name: 'Heal node 4', exact: true }).click();
    await expect(dialog).toBeHidden();
    await expect(page.getByTestId('node-row-4')).toHaveAttribute('data-state', 'up', { timeout: 5_000 });

    await page.goto('/audit?action=node');
    const rows = page.getByTestId('audit-row');
    await expect(page.getByTestId('audit-table')).toHaveAttribute('data-loading-state', 'ready');
    // Newest first: the heal, then the latency.
    await expect(rows.nth(0)).toHaveAttribute('data-action', 'node.heal');
    await expect(rows.nth(0)).toContainText('node 4');
    await expect(rows.nth(0)).toContainText('e2e-operator');
    await expect(rows.nth(1)).toHaveAttribute('data-action', 'node.latency');
    for (const action of await rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-action')))) expect(action).toMatch(/^node\./);

    await rows
      .nth(1)
      .getByRole('button', { name: /Show details of node\.latency on node 4/ })
      .click();
    const detail = page.getByTestId('audit-detail');
    await expect(detail).toBeVisible();
    const diff = detail.getByTestId('audit-diff');
    await expect(diff).toHaveAttribute('data-shape', 'fields');
    // The fault row changed: pass-through before, latency after.
    const faultRow = diff.getByRole('row', { name: /^Fault/ });
    await expect(faultRow.getByRole('cell').nth(0)).toHaveText('pass');
    await expect(faultRow.getByRole('cell').nth(1)).toContainText('latency');
    await expect(detail).toContainText('"latencyMs":40');
    await saveScreens(page, 'audit-expanded');

    const [csv] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-csv').click()]);
    expect(csv.suggestedFilename()).toBe('redlock-audit.csv');
    const csvText = readFileSync((await csv.path())!, 'utf8');
    const [header, ...lines] = csvText.trim().split(/\r\n/);
    expect(header).toBe(AUDIT_CSV_COLUMNS.join(','));
    expect(lines.some((l) => l.includes('node.latency') && l.includes('node 4'))).toBe(true);
    expect(lines.every((l) => /,node\./.test(l))).toBe(true);

    const [json] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-json').click()]);
    expect(json.suggestedFilename()).toBe('redlock-audit.json');
    const exported = JSON.parse(readFileSync((await json.path())!, 'utf8')) as { entries: Array<{ action: string; target: string }> };
    expect(exported.entries.some((e) => e.action === 'node.heal' && e.target === 'node 4')).toBe(true);
    expect(exported.entries.every((e) => e.action.startsWith('node.'))).toBe(true);
  });

  test('filters by actor from the keyboard, says so when nothing matches, and pages through many entries', async ({ page }) => {
    // 60 audited actions: heal on an already healthy node changes nothing but is still recorded.
    for (let i = 0; i < 60; i++) {
      const res = await postAsSession(page, '/api/nodes/5/actions', { action: 'heal' });
      expect(res.status(), await res.text()).toBe(200);
    }
    await page.goto('/audit?action=node.heal');
    await expect(page.getByTestId('audit-table')).toHaveAttribute('data-loading-state', 'ready');
    await expect(page.getByTestId('audit-row')).toHaveCount(50);
    await expect(page.getByTestId('audit-range')).toHaveText(/^1–50 of (\d+)$/);
    const total = Number((await page.getByTestId('audit-range').textContent())!.match(/of (\d+)/)![1]);
    expect(total).toBeGreaterThanOrEqual(60);
    await page.getByRole('button', { name: 'Next page' }).click();
    await expect(page.getByTestId('audit-range')).toHaveText(`51–${Math.min(100, total)} of ${total}`);
    await expect(page.getByTestId('audit-row')).toHaveCount(Math.min(50, total - 50));
    await saveScreens(page, 'audit');

    // `/` focuses the actor filter (the shell's shortcut); an unknown actor matches nothing.
    await page.locator('body').click({ position: { x: 5, y: 300 } });
    await page.keyboard.press('/');
    const actor = page.getByLabel('Actor');
    await expect(actor).toBeFocused();
    await actor.fill('nobody-at-all');
    await expect(page.getByTestId('audit-empty')).toContainText('No entries match these filters');
    await expect(page).toHaveURL(/actor=nobody-at-all/);
    await saveScreens(page, 'audit-empty');
    await actor.fill('e2e-operator');
    await expect(page.getByTestId('audit-row').first()).toContainText('e2e-operator');
  });
});
