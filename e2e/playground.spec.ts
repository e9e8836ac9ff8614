import { expect, test } from './support/test';
import { signIn } from './support/login';
import { saveScreens } from './support/screens';

const unique = () => `${Date.now().toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`;

test.describe('playground: locks by hand, votes node by node', () => {
  test.beforeEach(async ({ page }) => {
    await signIn(page);
  });

  test('acquire fenced with metadata, see the votes, be refused with a 409 and its votes, extend, release', async ({ page }) => {
    const resource = `e2e-pg/${unique()}`;
    await page.goto('/playground');
    await expect(page.getByTestId('session-locks-empty')).toBeVisible();
    await expect(page.getByTestId('playground-cluster')).toContainText('Locks can be granted');
    await saveScreens(page, 'playground-empty');

    await page.getByLabel('Resource').fill(resource);
    await page.getByLabel('TTL (ms)').fill('5000');
    await page.getByRole('button', { name: '+ Add field' }).click();
    await page.getByLabel('Metadata field 2 name').fill('ticket');
    await page.getByLabel('Metadata field 2 value').fill('OPS-42');
    await page.getByTestId('acquire-button').click();

    const ops = page.getByTestId('operation');
    const grant = ops.first();
    await expect(grant).toHaveAttribute('data-kind', 'acquire');
    await expect(grant).toHaveAttribute('data-ok', 'true');
    await expect(grant.getByTestId('operation-outcome')).toHaveText('granted');
    // Five tiles, numbered 1…5, a quorum of them for.
    for (let node = 1; node <= 5; node++) await expect(grant.getByTestId(`vote-node-${node}`)).toBeVisible();
    expect(await grant.locator('[data-vote="for"]').count()).toBeGreaterThanOrEqual(3);

    const card = page.locator(`[data-testid="session-lock"][data-resource="${resource}"]`);
    await expect(card).toHaveAttribute('data-status', 'held');
    // The e2e lease ceiling is 5 s: the card's watchdog keeps the lock while the test looks around.
    await card.getByTestId('keep-alive').check();
    await expect(card.getByTestId('session-lock-fence')).toHaveText(/^\d+$/);
    const token = (await card.getAttribute('data-token'))!;

    // The metadata went to the nodes with the lock.
    const detail = await page.request.get(`/api/locks/${encodeURIComponent(resource)}`);
    const body = (await detail.json()) as { view: { majorityToken: string; meta: Record<string, string> } | null };
    expect(body.view?.majorityToken).toBe(token);
    expect(body.view?.meta).toMatchObject({ ticket: 'OPS-42', purpose: 'trying the playground' });

    // The same resource again: 409, and the votes say why, node by node (numbered from 1 like everywhere).
    await page.getByTestId('acquire-button').click();
    const refused = ops.first();
    await expect(refused).toHaveAttribute('data-ok', 'false');
    await expect(refused).toHaveAttribute('data-status', '409');
    await expect(refused.getByTestId('operation-outcome')).toHaveText('409 · contended');
    await expect(refused.getByTestId('vote-node-5')).toBeVisible();
    await expect(refused.getByTestId('vote-node-0')).toHaveCount(0);
    expect(await refused.locator('[data-reason="contended"]').count()).toBeGreaterThanOrEqual(3);
    // The refusal names who holds it: the owner from the holder's metadata (never its token).
    await expect(refused.getByRole('alert')).toContainText('held by another client "e2e-operator"');
    await expect(refused.getByRole('alert')).not.toContainText(token);

    // Extend, then release: each with its votes.
    await card.getByTestId('extend-button').click();
    await expect(ops.first()).toHaveAttribute('data-kind', 'extend');
    await expect(ops.first().getByTestId('operation-outcome')).toHaveText('extended');
    expect(await ops.first().locator('[data-vote="for"]').count()).toBeGreaterThanOrEqual(3);

    await card.getByTestId('release-button').click();
    await expect(ops.first()).toHaveAttribute('data-kind', 'release');
    await expect(ops.first().getByTestId('operation-outcome')).toContainText('released');
    await expect(card).toHaveAttribute('data-status', 'released');
    const after = (await (await page.request.get(`/api/locks/${encodeURIComponent(resource)}`)).json()) as { view: unknown };
    expect(after.view).toBeNull();
    await saveScreens(page, 'playground');

    // The session list survives a reload (sessionStorage), with the token.
    await page.reload();
    await expect(card).toHaveAttribute('data-status', 'released');
    await expect(card).toHaveAttribute('data-token', token);
  });

  test('a TTL above the cluster ceiling is refused before it is sent', async ({ page }) => {
    await page.goto('/playground');
    await expect(page.getByTestId('playground-cluster')).toContainText('max TTL 5,000 ms');
    await page.getByLabel('TTL (ms)').fill('60000');
    await expect(page.getByRole('alert').filter({ hasText: 'at most 5,000 ms' })).toBeVisible();
    await expect(page.getByTestId('acquire-button')).toBeDisabled();
  });
});
