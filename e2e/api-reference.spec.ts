import { expect, test } from './support/test';
import { expectAxeClean } from './support/axe';
import { signIn } from './support/login';

interface OpenApi {
  paths: Record<string, Record<string, { summary: string; tags: string[] }>>;
}

/**
 * The API reference (issue 19): the OpenAPI document rendered by Scalar, readable without a login
 * (a program's author may hold only an API key), in the console's palette and both themes, and
 * loading nothing from anywhere but the console.
 */
test.describe('the API reference page', () => {
  test('lists every lock-service operation of the document, anonymously, and nothing leaves the origin', async ({ page, baseURL }) => {
    const origin = new URL(baseURL!).origin;
    const foreign: string[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith(origin) && !r.url().startsWith('data:') && !r.url().startsWith('blob:')) foreign.push(r.url());
    });
    const blocked: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) blocked.push(m.text());
    });
    const doc = (await (await page.request.get('/api/openapi.json')).json()) as OpenApi;
    const lockService = Object.values(doc.paths)
      .flatMap((ops) => Object.values(ops))
      .filter((op) => op.tags.includes('lock service'))
      .map((op) => op.summary);
    expect(lockService.length).toBeGreaterThanOrEqual(3);

    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto('/api-reference');
    await expect(page.getByRole('heading', { level: 1, name: 'redlock-console HTTP API' })).toBeVisible();
    const sidebar = page.getByRole('complementary');
    await sidebar.getByRole('button', { name: /Open Group - lock service/ }).click();
    for (const summary of lockService)
      await expect(sidebar.getByRole('link', { name: new RegExp(`^${summary.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`) })).toBeVisible();
    await sidebar.getByRole('link', { name: new RegExp(`^${lockService[0]!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`) }).click();
    await expect(page.getByRole('heading', { name: lockService[0]! }).first()).toBeVisible();
    await expectAxeClean(page);
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.screenshot({ path: `test-results/screens/api-reference-${scheme}.png` });
    }
    expect(foreign).toEqual([]);
    expect(blocked).toEqual([]);
  });

  test('is found from the login page, from the console (g r, and the ? dialog), and leads back by the brand', async ({ page }) => {
    await page.goto('/login');
    await page.getByRole('link', { name: 'API reference' }).click();
    await expect(page).toHaveURL(/\/api-reference$/);
    await signIn(page);
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto('/');
    await page.getByRole('button', { name: 'Keyboard shortcuts (?)' }).click();
    await expect(page.getByTestId('shortcuts-dialog').getByRole('link', { name: 'API reference' })).toBeVisible();
    await page.keyboard.press('Escape');
    await page.keyboard.press('g');
    await page.keyboard.press('r');
    await expect(page).toHaveURL(/\/api-reference$/);
    await expect(page.getByRole('heading', { level: 1, name: 'redlock-console HTTP API' })).toBeVisible();
    await page
      .getByRole('navigation', { name: 'Console' })
      .getByRole('link', { name: /redlock-console/ })
      .click();
    await expect(page).toHaveURL(/\/$/);
  });
});
