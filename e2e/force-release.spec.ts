import { expect, test } from './support/test';
import { z } from 'zod';
import { auditResponseSchema } from '../lib/api/audit';
import { signIn } from './support/login';
import { saveScreens } from './support/screens';
import { deleteLocks, randomToken, seedLocks } from './support/seed-locks';

const unique = () => `${Date.now().toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`;

test.describe('force-release: from a playground grant to the audit log', () => {
  test('a lock taken in the playground shows up live in the matrix within 1 s, is force-released through the whole flow, disappears and is audited', async ({
    page,
    context,
  }) => {
    test.slow(); // six more screenshots of the dialog, on a busy machine
    await signIn(page);
    const resource = `e2e-fr/${unique()}`;
    const reason = `e2e: holder wedged, releasing ${resource}`;

    // The matrix is open first, filtered to this run's prefix: nothing there yet.
    await page.goto(`/locks?prefix=${encodeURIComponent(resource)}`);
    await expect(page.getByTestId('lock-matrix')).toHaveAttribute('data-loading-state', 'ready');
    await expect(page.getByTestId('locks-empty')).toBeVisible();

    // A second tab takes the lock by hand, fenced, and keeps it alive (the e2e lease ceiling is 5 s).
    const playground = await context.newPage();
    await playground.goto('/playground');
    await playground.getByLabel('Resource').fill(resource);
    await playground.getByLabel('TTL (ms)').fill('5000');
    const ops = playground.getByTestId('operation');
    for (let attempt = 1; attempt <= 3; attempt++) {
      await playground.getByTestId('acquire-button').click();
      await expect(ops).toHaveCount(attempt);
      if ((await ops.first().getAttribute('data-ok')) === 'true') break;
      // Only a 503 (node replies missed the round's deadline on a busy host) is asked again, as an operator would.
      expect(await ops.first().getAttribute('data-status')).toBe('503');
    }
    const card = playground.locator(`[data-testid="session-lock"][data-resource="${resource}"]`);
    await expect(card).toHaveAttribute('data-status', 'held');
    const granted = Date.now();

    // Live: the row appears in the open matrix within 1 s of the grant, with a majority of cells on its token.
    const row = page.locator(`[data-testid="lock-row"][data-resource="${resource}"]`);
    await expect(row).toBeVisible({ timeout: 1_000 });
    test.info().annotations.push({ type: 'grant → row', description: `${Date.now() - granted} ms` });
    const token = (await card.getAttribute('data-token'))!;
    expect(token.length).toBeGreaterThanOrEqual(20);
    await card.getByTestId('keep-alive').check();
    await expect(row).toHaveAttribute('data-state', 'held');
    const cellTokens = await row
      .locator('[data-testid="lock-cell"]')
      .evaluateAll((cells) => cells.map((c) => (c as HTMLElement).dataset.token ?? null));
    expect(cellTokens.filter((t) => t === token).length).toBeGreaterThanOrEqual(3);

    // Detail → force-release.
    await row.getByRole('link', { name: resource }).click();
    await expect(page.getByTestId('lock-detail')).toHaveAttribute('data-state', 'held');
    await page.getByTestId('force-release-button').click();
    const dialog = page.getByTestId('force-release-dialog');
    await expect(dialog).toBeVisible();
    await expect(dialog).toContainText(token);

    // (a) the dry run: what each node will do.
    const preview = dialog.getByTestId('force-release-preview');
    await expect(preview).toHaveAttribute('data-loading-state', 'ready');
    await expect(dialog.locator('[data-outcome="would-delete"]')).not.toHaveCount(0);
    expect(await dialog.locator('[data-outcome="would-delete"]').count()).toBeGreaterThanOrEqual(3);
    const confirm = dialog.getByTestId('force-release-confirm');
    await expect(confirm).toBeDisabled();

    // The holder is alive: the dialog says when it last extended and how often, read
    // from its keys, and what that means. The keep-alive extends a third into each lease; its pace
    // is known from its second extension on ("Check again" reads the keys anew).
    const pulse = dialog.getByTestId('holder-pulse');
    await expect(async () => {
      await dialog.getByRole('button', { name: 'Check again' }).click();
      await expect(preview).toHaveAttribute('data-loading-state', 'ready');
      await expect(pulse).toHaveAttribute('data-pulse', 'alive', { timeout: 500 });
    }).toPass({ timeout: 15_000 });
    await expect(pulse).toContainText(/Alive: extended \d+\.\d s ago, every ~\d+\.\d s \(\d+ extensions?\)/);
    await expect(dialog.getByTestId('holder-pulse-explain')).toContainText('learns it lost the lock only at its next extend or check');

    // (b) a reason and (c) the resource typed: both required; for a live holder, (d) the box too.
    await dialog.getByLabel(/Reason/).fill(reason);
    await expect(confirm).toBeDisabled();
    await dialog.getByLabel(/to confirm/).fill(`${resource}x`);
    await expect(confirm).toBeDisabled();
    await dialog.getByLabel(/to confirm/).fill(resource);
    await expect(confirm).toBeDisabled();
    await dialog.getByTestId('confirm-live-holder').check();
    await expect(confirm).toBeEnabled();
    for (const width of [390, 1280, 1920]) {
      await page.setViewportSize({ width, height: width === 390 ? 844 : 1000 });
      await saveScreens(page, `force-release-dialog-live-${width}`);
    }
    await page.setViewportSize({ width: 1440, height: 900 });

    // (d) the per-node result and the audit id.
    await confirm.click();
    const result = dialog.getByTestId('force-release-result');
    await expect(result).toBeVisible();
    expect(await result.locator('[data-outcome="deleted"]').count()).toBeGreaterThanOrEqual(3);
    const auditId = (await dialog.getByTestId('force-release-audit-id').textContent())!.trim();
    expect(auditId).not.toBe('');
    await saveScreens(page, 'force-release-result');
    await dialog.getByRole('button', { name: 'Done' }).click();
    await expect(dialog).toBeHidden();

    // Gone: the detail says free, the matrix no longer lists it.
    await expect(page.getByTestId('lock-free')).toBeVisible();
    await page.goto(`/locks?prefix=${encodeURIComponent(resource)}`);
    await expect(page.getByTestId('locks-empty')).toBeVisible();
    await expect(row).toHaveCount(0);

    // The holder's watchdog finds out: its next extension is refused and the card says lost.
    await expect(card).toHaveAttribute('data-status', 'lost', { timeout: 5_000 });
    await saveScreens(playground, 'playground-lost');

    // The audit log has the entry, with the operator's reason.
    const res = await page.request.get('/api/audit?action=lock.force-release&limit=50');
    expect(res.status()).toBe(200);
    const audit = auditResponseSchema.parse(await res.json());
    const entry = audit.entries.find((e) => e.id === auditId);
    expect(entry, `audit entry ${auditId} in ${JSON.stringify(audit.entries.slice(0, 3))}`).toBeDefined();
    expect(entry!.target).toBe(resource);
    expect(entry!.reason).toBe(reason);
    expect(entry!.actor).toBe('e2e-operator');
  });

  test('a viewer sees no mutation controls, and the server refuses a force-release anyway', async ({ page }) => {
    const resource = `e2e-viewer/${unique()}`;
    const token = randomToken();
    await seedLocks([{ resource, token, ttlMs: 60_000, nodes: [1, 2, 3, 4, 5] }]);
    try {
      await signIn(page, 'viewer');
      await page.goto(`/locks/${encodeURIComponent(resource)}`);
      await expect(page.getByTestId('lock-detail')).toHaveAttribute('data-state', 'held');
      await expect(page.getByTestId('role-badge')).toHaveText('viewer');
      await expect(page.getByTestId('force-release-button')).toHaveCount(0);
      await expect(page.getByRole('button', { name: /release/i })).toHaveCount(0);

      await page.goto('/playground');
      await expect(page.getByTestId('playground-refused')).toBeVisible();
      await expect(page.getByTestId('acquire-button')).toHaveCount(0);
      await expect(page.getByRole('button', { name: /acquire|extend|release/i })).toHaveCount(0);
      await saveScreens(page, 'playground-viewer');

      const me = z.object({ csrfToken: z.string() }).parse(await (await page.request.get('/api/auth/me')).json());
      const refused = await page.request.post(`/api/locks/${encodeURIComponent(resource)}/force-release`, {
        data: { token, reason: 'viewer tries anyway', dryRun: false },
        headers: { 'x-csrf-token': me.csrfToken },
      });
      expect(refused.status()).toBe(403);
    } finally {
      await deleteLocks([resource]);
    }
  });
});
