import type { Locator, Page } from '@playwright/test';
import { expect, test } from './support/test';
import { expectAxeClean } from './support/axe';
import { signIn } from './support/login';
import { acquire as acquireRaw, AS_CLIENT, postAsSession, restoreNode } from './support/ops';
import { sandbox } from './support/sandbox';
import { saveScreens } from './support/screens';

async function acquire(page: Page, resource: string): Promise<void> {
  const res = await acquireRaw(page, resource);
  expect(res.status(), await res.text()).toBe(200);
}

/**
 * Take a lock and keep it, as a live client does: extended every second until the returned stop.
 * The sandbox's leases last at most 5 s, and the Nodes screen reads its holders every 3 s, a read
 * taking 2 s while two nodes are cut off (it waits for them): a lock taken once could expire
 * before a read saw it. In a fresh console a read came too late for the 5 s wait 5 times in 6,
 * with lib/server loaded once or not. An extend that is not answered 200 is kept in `failures`
 * (status and body, or the request's error), which the test asserts empty once the lock has served.
 */
async function holdLock(page: Page, resource: string): Promise<{ stop: () => Promise<void>; failures: string[] }> {
  const res = await acquireRaw(page, resource);
  expect(res.status(), await res.text()).toBe(200);
  const { token } = (await res.json()) as { token: string };
  let stopped = false;
  const failures: string[] = [];
  const loop = (async () => {
    while (!stopped) {
      // pace: a client's extend every second, well inside the 5 s lease
      await new Promise((r) => setTimeout(r, 1_000));
      if (stopped) break;
      const url = `/api/locks/${encodeURIComponent(resource)}/extend`;
      const answer = await page.request
        .post(url, { headers: AS_CLIENT, data: { token, ttlMs: 5_000 } })
        .then(async (r) => (r.status() === 200 ? null : `${r.status()} ${await r.text()}`))
        .catch((e: unknown) => (stopped ? null : String(e)));
      if (answer === null) continue;
      failures.push(answer);
      break; // a lock an extend lost is not held again by the next one
    }
  })();
  const stop = async () => {
    stopped = true;
    await loop;
  };
  return { stop, failures };
}

/** Save one element (a node card, a dialog) in both themes under test-results/screens/. */
async function saveElement(page: Page, element: Locator, name: string): Promise<void> {
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await element.screenshot({ path: `test-results/screens/${name}-${scheme}.png` });
  }
  await page.emulateMedia({ colorScheme: null });
}

test.describe('nodes: operator actions with their blast radius', () => {
  test('crash from the Nodes screen, see it down on the overview within 2 s, restart without persistence, watch the quarantine count down', async ({
    page,
  }) => {
    await signIn(page);
    try {
      // The Overview first, as an operator's session would have it: the 2 s below are the console
      // seeing the crash, not the browser loading the Overview's code for the first time (≈ 1 s of
      // a loaded machine's 2.0–2.5 s, measured in traces).
      await page.goto('/');
      await expect(page.getByTestId('node-state-2')).toHaveText('up');
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Nodes' }).click();
      await expect(page.getByTestId('node-row-2')).toHaveAttribute('data-state', 'up');
      await page.getByRole('button', { name: 'Crash node 2' }).click();
      const dialog = page.getByTestId('action-dialog');
      await expect(dialog.getByRole('heading', { name: 'Crash node 2?' })).toBeVisible();
      await expect(dialog.getByTestId('blast-radius')).toHaveAttribute('data-state', 'ready');
      await expect(dialog).toContainText('New locks can still be granted');
      await saveScreens(page, 'nodes-crash-dialog');

      await dialog.getByRole('button', { name: 'Crash node 2', exact: true }).click();
      await expect(dialog).toBeHidden();
      // From the console's answer that the node is crashed to the Overview saying so: within 2 s.
      await expect(page.getByTestId('toasts')).toContainText('node 2: crash done');
      const crashedAt = Date.now();
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Overview' }).click();
      await expect(page.getByTestId('node-state-2')).toHaveText('down', { timeout: 2_000 });
      expect(Date.now() - crashedAt).toBeLessThan(2_000);
      await expect(page.getByTestId('node-card-2')).toHaveAttribute('data-state', 'down');
      await expect(page.getByTestId('cluster-banner')).toContainText('4 of 5 masters reachable');
      await expect(page.getByTestId('cluster-banner')).toContainText('node 2 is down');
      await saveScreens(page, 'overview-node-down');

      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Nodes' }).click();
      await expect(page.getByTestId('node-row-2')).toHaveAttribute('data-state', 'down');
      await page.getByRole('button', { name: 'Restart node 2' }).click();
      await expect(dialog.getByRole('heading', { name: 'Restart node 2?' })).toBeVisible();
      await dialog.getByRole('radio', { name: 'None' }).check();
      await expect(dialog).toContainText('comes back empty');
      await saveScreens(page, 'nodes-restart-dialog');
      await dialog.getByRole('button', { name: 'Restart node 2', exact: true }).click();
      await expect(dialog).toBeHidden();

      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Overview' }).click();
      await expect(page.getByTestId('node-state-2')).toHaveText('up', { timeout: 5_000 });
      await expect(page.getByTestId('node-card-2')).toContainText('none');
      // Back without its data and without an epoch sentinel: the console's next acquire quarantines it.
      const vote = page.getByTestId('node-quarantine-2');
      await expect(vote).toHaveAttribute('data-state', 'unknown');
      await expect(vote).toContainText('quarantined at the next acquire');

      await acquire(page, `e2e-quarantine-${Date.now()}`);
      await expect(vote).toHaveAttribute('data-state', 'quarantined', { timeout: 3_000 });
      // Why: the acquire found no epoch sentinel.
      await expect(page.getByTestId('node-quarantine-cause-2')).toHaveText('data loss');
      const left = page.getByTestId('node-quarantine-left-2');
      const seconds = async () => Number((await left.textContent())?.replace(/[^\d.]/g, ''));
      const first = await seconds();
      expect(first).toBeGreaterThan(0);
      expect(first).toBeLessThanOrEqual(5);
      // It counts down in the browser between readings (100 ms steps), not once a second.
      await expect.poll(seconds, { timeout: 2_000 }).toBeLessThan(first - 0.25);
      await expect(page.getByTestId('cluster-banner')).toContainText('4 usable');
      await saveScreens(page, 'overview-quarantine');
      // Then the quarantine ends and the node votes again.
      await expect(vote).toHaveAttribute('data-state', 'votes', { timeout: 8_000 });
      await expect(page.getByTestId('cluster-banner')).toContainText('5 of 5 masters reachable · 5 usable');
    } finally {
      await restoreNode(page, 2);
    }
  });

  test('the blast radius names the locks that would lose their majority before anything happens', async ({ page }) => {
    await signIn(page);
    const control = sandbox();
    const resource = `e2e-blast-${Date.now()}`;
    let hold: Awaited<ReturnType<typeof holdLock>> | null = null;
    try {
      // With nodes 4 and 5 cut off, a lock granted now lives on exactly a quorum: 1, 2 and 3.
      for (const id of [4, 5]) await control.act(id, { action: 'partition' });
      await page.goto('/nodes');
      await expect(page.getByTestId('node-row-4')).toHaveAttribute('data-state', 'partitioned');
      hold = await holdLock(page, resource);
      // The next holders read starts up to 3 s from now and takes up to 2 s (it waits for the
      // nodes cut off): past the 5 s default, and the lock is kept meanwhile.
      // A lost lock fails here as what it is (an extend refused), not as a count of 0.
      await expect(async () => {
        expect(hold!.failures, 'every extend of the held lock was answered 200').toEqual([]);
        await expect(page.getByTestId('node-locks-1')).toContainText(/deciding vote for [1-9]/, { timeout: 1_000 });
      }).toPass({ timeout: 10_000 });
      await page.getByRole('button', { name: 'Partition node 1' }).click();
      const dialog = page.getByTestId('action-dialog');
      const radius = dialog.getByTestId('blast-radius');
      await expect(radius).toHaveAttribute('data-state', 'ready');
      await expect(dialog.getByTestId('blast-radius-locks')).toContainText(resource);
      await expect(dialog.getByTestId('blast-radius-summary')).toContainText(/would lose (its|their) majority/);
      await expect(dialog).toContainText('New locks cannot be granted');
      expect(hold.failures, 'every extend of the held lock was answered 200').toEqual([]);
      await saveScreens(page, 'nodes-blast-radius');
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      await expect(dialog).toBeHidden();
      // Cancel did nothing: node 1 is still reachable.
      await expect(page.getByTestId('node-row-1')).toHaveAttribute('data-state', 'up');

      // Healing has no blast radius: it gives a vote back.
      await page.getByRole('button', { name: 'Heal node 4' }).click();
      await expect(dialog.getByTestId('blast-radius')).toHaveAttribute('data-state', 'none');
      await expect(dialog).toContainText('Node 4 votes again once it answers');
      await dialog.getByRole('button', { name: 'Heal node 4', exact: true }).click();
      await expect(page.getByTestId('node-row-4')).toHaveAttribute('data-state', 'up', { timeout: 5_000 });
    } finally {
      await hold?.stop();
      for (const id of [4, 5]) await control.act(id, { action: 'heal' });
    }
  });

  test("mark clean applies only to the sentinel the operator saw: a node that changed meanwhile is refused, looked at again, then marked with the server's warning", async ({
    page,
  }) => {
    // A restart, a quarantine, two axe passes in both themes and a restore: past a minute on a loaded CI machine.
    test.slow();
    await signIn(page);
    const control = sandbox();
    try {
      await control.act(3, { action: 'restart', persistence: 'none' });
      await page.goto('/nodes');
      await expect(page.getByTestId('nodes-vote-3')).toHaveText('no epoch', { timeout: 5_000 });
      // From here the screen is not told (its node reads fail) until the refusal: what the operator
      // judges is the node as shown now. (Routed only after the dialog opened, a read in between once
      // showed the quarantine first, and the click landed on "Look again" instead.)
      await page.route('**/api/nodes', (route) => route.abort());
      await expectAxeClean(page); // with the Mark clean button on screen
      await page.getByRole('button', { name: /^Mark clean node 3\b/ }).click();
      const dialog = page.getByTestId('mark-clean-dialog');
      await expect(dialog).toContainText('Only if you know it lost no lock that is still valid');
      // No sentinel: when the data went is unknown, and the warning says so before the click.
      await expect(dialog.getByTestId('mark-clean-warning')).toContainText('no epoch sentinel');
      const confirm = dialog.getByRole('button', { name: 'Mark node 3 clean' });
      await expect(confirm).toBeDisabled();
      await dialog.getByLabel('Reason (recorded in the audit log)').fill('e2e: node 3 never served a lock');
      await saveScreens(page, 'nodes-mark-clean');
      await expectAxeClean(page);

      // Meanwhile (the screen not yet told), an acquire finds the loss and quarantines node 3.
      await acquire(page, `e2e-mark-clean-${Date.now()}`);
      const refused = page.waitForResponse((r) => r.url().endsWith('/api/nodes/3/mark-clean'), { timeout: 15_000 });
      await confirm.click();
      expect((await refused).status()).toBe(409);
      await expect(dialog.getByTestId('mark-clean-changed')).toContainText('changed since it was looked at');
      await saveScreens(page, 'nodes-mark-clean-changed');
      await page.unroute('**/api/nodes');
      // The screen catches up (the 5 s quarantine may even be over by then): look again.
      await expect(page.getByTestId('nodes-vote-3')).not.toHaveText('no epoch', { timeout: 5_000 });
      const marks: string[] = [];
      page.on('request', (r) => void (r.url().endsWith('/api/nodes/3/mark-clean') && marks.push(r.method())));
      await dialog.getByRole('button', { name: 'Look again' }).click();
      await expect(dialog.getByTestId('mark-clean-judged')).not.toContainText('no epoch sentinel');

      const answer = page.waitForResponse((r) => r.url().endsWith('/api/nodes/3/mark-clean'), { timeout: 15_000 });
      await dialog.getByRole('button', { name: 'Mark node 3 clean' }).click();
      expect((await answer).status()).toBe(200);
      expect(marks, 'only the deliberate click marked the node').toEqual(['POST']);
      const body = (await (await answer).json()) as { warning: string | null };
      if (body.warning) {
        // A restart or loss less than the lease ceiling ago: the warning stays on screen until closed.
        expect(body.warning).toMatch(/less than the lease ceiling/);
        await expect(dialog.getByTestId('mark-clean-result')).toContainText(body.warning);
        await dialog.getByRole('button', { name: 'Close', exact: true }).last().click();
      }
      await expect(dialog).toBeHidden();
      await expect(page.getByTestId('nodes-vote-3')).toHaveText('votes', { timeout: 5_000 });
    } finally {
      await page.unroute('**/api/nodes').catch(() => undefined);
      await restoreNode(page, 3);
    }
  });

  test('a crash and start of an AOF node: the card says restart detected, with both processes and the countdown', async ({ page }) => {
    await signIn(page);
    const control = sandbox();
    try {
      await page.goto('/');
      const card = page.getByTestId('node-card-4');
      await expect(card).toHaveAttribute('data-state', 'up');
      await control.act(4, { action: 'crash' });
      await control.act(4, { action: 'start' });
      const vote = page.getByTestId('node-quarantine-4');
      // Counted as soon as the console sees the new process, before any acquire records it.
      await expect(vote).toHaveAttribute('data-state', 'quarantined', { timeout: 3_000 });
      // The quarantine lasts the e2e ceiling (5 s) from the process start: read it all at once, then take the pictures.
      const [cause, why, left] = await Promise.all(
        ['node-quarantine-cause-4', 'node-quarantine-why-4', 'node-quarantine-left-4'].map((id) => page.getByTestId(id).textContent()),
      );
      await saveElement(page, card, 'node-card-restart-quarantine');
      expect(cause).toBe('restart detected');
      expect(why).toMatch(/^process [0-9a-f]{8} → [0-9a-f]{8}/);
      expect(left).toMatch(/\d/);
      await expectAxeClean(page);
    } finally {
      await restoreNode(page, 4);
    }
  });

  test('the restart dialog says what a persistence change does, rdb included', async ({ page }) => {
    await signIn(page);
    const control = sandbox();
    try {
      await page.goto('/nodes');
      await page.getByRole('button', { name: 'Restart node 1' }).click();
      const dialog = page.getByTestId('action-dialog');
      const data = dialog.getByTestId('restart-data');
      // The same persistence: stopped gracefully, adopted, votes at once.
      await expect(dialog.getByRole('radio', { name: 'AOF always' })).toBeChecked();
      await expect(data).toHaveAttribute('data-adopted', 'yes');
      await dialog.getByRole('radio', { name: 'RDB (Redis default)' }).check();
      await expect(dialog.getByTestId('persistence-hint')).toHaveText('a crash brings back the last snapshot: the node sits out maxTtlMs');
      await expect(data).toContainText('It sits out the lease ceiling (5 s) as a restart');
      await expect(data).toContainText('The persistence changes (AOF always → RDB snapshots)');
      await expectAxeClean(page);
      await dialog.getByRole('button', { name: 'Cancel' }).click();

      // After a period without persistence, AOF always loads the AOF written before it.
      await control.act(1, { action: 'restart', persistence: 'none' });
      await expect(page.getByTestId('node-row-1')).toContainText('none', { timeout: 5_000 });
      await page.getByRole('button', { name: 'Restart node 1' }).click();
      await dialog.getByRole('radio', { name: 'AOF always' }).check();
      await expect(data).toHaveAttribute('data-adopted', 'no');
      await expect(data).toContainText('It loads the AOF it wrote the last time it ran with one');
      await expect(data).toContainText('quarantines it (restart detected) for the lease ceiling (5 s)');
      await saveElement(page, dialog, 'nodes-restart-dialog-aof-after-none');
      await dialog.getByRole('button', { name: 'Restart node 1', exact: true }).click();
      await expect(dialog).toBeHidden();
      // It is caught by the quarantine, as the dialog said.
      await expect(page.getByTestId('nodes-cause-1')).toContainText('restart detected', { timeout: 5_000 });
    } finally {
      await restoreNode(page, 1);
    }
  });

  test('a viewer sees the nodes but no action at all, and the server refuses one anyway', async ({ page }) => {
    await signIn(page, 'viewer');
    await page.goto('/nodes');
    for (let id = 1; id <= 5; id++) await expect(page.getByTestId(`node-row-${id}`)).toBeVisible();
    await expect(page.getByTestId('viewer-notice')).toContainText('signed in as a viewer');
    await expect(page.getByTestId(/^node-actions-/)).toHaveCount(0);
    await expect(page.getByRole('button', { name: /crash|stop|start|restart|pause|resume|partition|heal|latency|clean/i })).toHaveCount(0);
    await saveScreens(page, 'nodes-viewer');
    const res = await postAsSession(page, '/api/nodes/1/actions', { action: 'crash' });
    expect(res.status()).toBe(403);
    await expect(page.getByTestId('node-row-1')).toHaveAttribute('data-state', 'up');
  });

  test('against external masters the screen explains why process and network actions are not offered', async ({ page }) => {
    await signIn(page);
    // The same console, told by /api/auth/me that it does not own the masters (what REDLOCK_NODES without a sandbox gives).
    await page.route('**/api/auth/me', async (route) => {
      const res = await route.fetch();
      await route.fulfill({ response: res, json: { ...(await res.json()), sandbox: false } });
    });
    await page.goto('/nodes');
    await expect(page.getByTestId('external-notice')).toContainText('process and network actions are unavailable');
    for (let id = 1; id <= 5; id++) await expect(page.getByTestId(`node-actions-${id}`)).toBeVisible();
    await expect(
      page.getByRole('button', { name: /^(crash|stop|start|restart|pause|resume|partition|heal|add latency) node/i }),
    ).toHaveCount(0);
    await expect(page.getByRole('group', { name: 'Epoch actions for node 1' })).toBeVisible();
    await saveScreens(page, 'nodes-external');
  });

  test('a delayed restart counts down to its start, and a node with its AOF comes back voting', async ({ page }) => {
    await signIn(page);
    await page.goto('/nodes');
    await page.getByRole('button', { name: 'Restart node 5' }).click();
    const dialog = page.getByTestId('action-dialog');
    await dialog.getByRole('radio', { name: 'AOF always' }).check();
    await dialog.getByLabel('Delay before starting (s)').fill('3');
    await expect(dialog.getByTestId('restart-data')).toContainText('Its keys come back, and it votes at once');
    await expect(dialog.getByTestId('restart-data')).toHaveAttribute('data-adopted', 'yes');
    await dialog.getByRole('button', { name: 'Restart node 5', exact: true }).click();
    await expect(dialog).toBeHidden();
    const row = page.getByTestId('node-row-5');
    await expect(row).toHaveAttribute('data-state', 'down', { timeout: 3_000 });
    await expect(row).toContainText(/restarts in\s*[0-3]\.\d s/);
    await expect(row).toHaveAttribute('data-state', 'up', { timeout: 8_000 });
    await expect(page.getByTestId('nodes-vote-5')).toHaveText('votes');
  });

  test('an operator sees every action, named for its node', async ({ page }) => {
    await signIn(page);
    await page.goto('/nodes');
    for (let id = 1; id <= 5; id++) {
      for (const name of ['Crash', 'Stop', 'Restart', 'Pause', 'Partition', 'Reset connections', 'Add latency']) {
        await expect(page.getByRole('button', { name: `${name} node ${id}`, exact: true })).toBeVisible();
      }
    }
    await saveScreens(page, 'nodes');
    await expectAxeClean(page);
  });
});
