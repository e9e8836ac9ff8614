import { readFileSync } from 'node:fs';
import { expect, test } from './support/test';
import type { Page } from '@playwright/test';
import { AUDIT_ACTIONS, AUDIT_CSV_COLUMNS } from '../lib/api/audit';
import type { LockGrant } from '../lib/api/locks';
import type { RunResponse } from '../lib/api/scenarios';
import { E2E_LOGIN } from '../playwright.config';
import { expectAxeClean } from './support/axe';
import { signIn } from './support/login';
import { AS_CLIENT, postAsSession } from './support/ops';
import { saveScreens } from './support/screens';

/** "2026-11-27 04:31:21 UTC+01:00": the console's one date format (components/ui/format.ts). */
const DATE_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC[+-]\d{2}:\d{2}$/;

const HOLDER_LOCK = { resource: 'audit-holder', ttlMs: 4_500, metadata: { owner: 'billing-7', host: 'web-3' } };

/** Run scenario 2 (minority failure) through the API, skip its predictions, cancel it once two nodes crashed; its run id. */
/**
 * Run scenario 2 step by step (paused from the start, one step at a time: however fast the steps
 * run, nothing happens between two polls) and cancel it once its `crash-two` step is done, so the
 * run took exactly two node actions of the crash kind.
 */
async function runMinorityFailure(page: Page): Promise<string> {
  const started = await postAsSession(page, '/api/scenarios/minority-failure/runs', { seed: 7, speed: 2 });
  expect(started.status(), await started.text()).toBe(200);
  const { runId } = ((await started.json()) as RunResponse).run!;
  expect((await postAsSession(page, '/api/scenarios/runs/current/pause', {})).status()).toBe(200);
  let cancelled = false;
  await expect
    .poll(
      async () => {
        const run = ((await (await page.request.get('/api/scenarios/runs/current')).json()) as RunResponse).run!;
        if (run.status === 'done' || run.status === 'cancelled' || run.status === 'failed') return run.status;
        if (!cancelled && run.steps.find((x) => x.id === 'crash-two')?.status === 'done') {
          await postAsSession(page, '/api/scenarios/runs/current/cancel', {});
          cancelled = true;
        } else if (run.status === 'predict') await postAsSession(page, '/api/scenarios/runs/current/predict', { choice: null });
        else if (run.status === 'paused') await postAsSession(page, '/api/scenarios/runs/current/step', {});
        return run.status;
      },
      { timeout: 60_000, intervals: [100] },
    )
    .toMatch(/^(done|cancelled|failed)$/);
  expect(cancelled).toBe(true);
  return runId;
}

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

  test('a force-release names the holder it hit, its PTTL reads in units, times in one format with the offset; every action is in the filter', async ({
    page,
  }) => {
    let res = await page.request.post('/api/locks', { headers: AS_CLIENT, data: HOLDER_LOCK });
    // Only a 503 (node replies missed the round's deadline on a busy host) is asked again, as a client would.
    for (let attempt = 2; attempt <= 3 && res.status() === 503; attempt++) {
      res = await page.request.post('/api/locks', { headers: AS_CLIENT, data: HOLDER_LOCK });
    }
    expect(res.status(), await res.text()).toBe(200);
    const grant = (await res.json()) as LockGrant;
    const released = await postAsSession(page, '/api/locks/audit-holder/force-release', {
      token: grant.token,
      reason: 'stuck in an incident',
    });
    expect(released.status(), await released.text()).toBe(200);

    await page.goto('/audit?action=lock.force-release');
    await expect(page.getByTestId('audit-table')).toHaveAttribute('data-loading-state', 'ready');
    const row = page.getByTestId('audit-row').filter({ hasText: 'audit-holder' }).first();
    await expect(row.getByTestId('audit-holder')).toHaveText(/^held by principal=client:e2e-client owner=billing-7 host=web-3/);
    // The time column: 24-hour local time, the full date, time and offset in its title.
    const time = row.locator('time');
    await expect(time.locator('span').first()).toHaveText(/^\d{2}:\d{2}:\d{2}$/);
    await expect(time).toHaveAttribute('title', DATE_TIME);

    // Opened from the keyboard: the diff's header is "PTTL", its values carry units.
    await row.focus();
    await page.keyboard.press('Enter');
    const detail = page.getByTestId('audit-detail');
    await expect(detail).toBeVisible();
    const diff = detail.getByTestId('audit-diff');
    await expect(diff.getByRole('columnheader', { name: 'PTTL', exact: true })).toBeVisible();
    await expect(diff).not.toContainText(/pttlMs/i);
    const pttl = diff
      .getByRole('row', { name: /^node 1/ })
      .getByRole('cell')
      .nth(1);
    await expect(pttl).toHaveText(/^[1-4]s → —$/);
    await expect(detail.getByRole('definition').first()).toHaveText(DATE_TIME);
    await expect(detail).toContainText('Holder hit');

    // The lock service's log below, and the lock's own history, print their times the same way.
    const serviceTime = page.getByTestId('lock-service-entry').filter({ hasText: 'audit-holder' }).first().locator('time');
    await expect(serviceTime).toHaveAttribute('title', DATE_TIME);
    await expect(serviceTime).toHaveText(/^\d{2}:\d{2}:\d{2}\d{4}-\d{2}-\d{2}$/);
    await page.goto('/locks/audit-holder');
    const hold = page.getByTestId('history-hold').first();
    await expect(hold).toHaveAttribute('data-ended', 'force-released');
    await expect(hold.getByRole('cell').first()).toHaveText(DATE_TIME);
    await page.goto('/audit?action=lock.force-release');
    await expect(page.getByTestId('audit-table')).toHaveAttribute('data-loading-state', 'ready');

    // Every action of the one list is in the action filter, scenario.run among them.
    const options = await page
      .getByLabel('Action')
      .locator('option')
      .evaluateAll((els) => els.map((e) => (e as HTMLOptionElement).value));
    for (const action of AUDIT_ACTIONS) expect(options).toContain(action);
    await page.getByLabel('Action').selectOption('scenario.run');
    await expect(page).toHaveURL(/action=scenario\.run/);
    await page.goto('/audit?action=lock.force-release');
    await page
      .getByTestId('audit-row')
      .filter({ hasText: 'audit-holder' })
      .first()
      .getByRole('button', { name: /Show details/ })
      .click();
    await expect(page.getByTestId('audit-detail')).toBeVisible();
    // Below the logs, each API key's use against its quotas: the key that held the lock is listed.
    const keyRow = page.getByTestId('api-key-row').filter({ hasText: 'client:e2e-client' });
    await expect(keyRow.getByTestId('api-key-held')).toHaveText(/^\d+ \/ 1.?000$/);
    await expectAxeClean(page);
    for (const width of [1440, 390]) {
      await page.setViewportSize({ width, height: 900 });
      await saveScreens(page, `audit-force-release-${width}`);
    }
  });

  test('the node actions a scenario takes are audited as the user who ran it, marked with the scenario and run', async ({ page }) => {
    test.setTimeout(120_000);
    const runId = await runMinorityFailure(page);
    await page.goto('/audit?action=node.crash');
    await expect(page.getByTestId('audit-table')).toHaveAttribute('data-loading-state', 'ready');
    const rows = page.getByTestId('audit-row').filter({ hasText: `run ${runId.slice(0, 6)}` });
    await expect(rows).toHaveCount(2);
    for (const row of await rows.all()) {
      await expect(row).toContainText(E2E_LOGIN.username);
      await expect(row.getByTestId('audit-via')).toHaveText(`by scenario 2 · run ${runId.slice(0, 6)}`);
    }
    await rows
      .first()
      .getByRole('button', { name: /Show details of node\.crash/ })
      .click();
    await expect(page.getByTestId('audit-detail')).toContainText(`scenario 2 (minority-failure), run ${runId}`);
    // The run itself, in the filter of its own family.
    await page.goto('/audit?action=scenario');
    await expect(page.getByTestId('audit-row').first()).toHaveAttribute('data-action', 'scenario.run');
    await page.goto('/audit?action=node');
    await expect(page.getByTestId('audit-table')).toHaveAttribute('data-loading-state', 'ready');
    await expectAxeClean(page);
    for (const width of [1440, 390]) {
      await page.setViewportSize({ width, height: 900 });
      await saveScreens(page, `audit-scenario-${width}`);
    }
  });
});
