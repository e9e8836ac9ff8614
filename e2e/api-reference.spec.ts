import { expect, test } from './support/test';
import { expectAxeClean } from './support/axe';
import { signIn } from './support/login';

interface OpenApi {
  paths: Record<string, Record<string, { summary: string; tags: string[] }>>;
}

/**
 * The API reference: the OpenAPI document rendered by Scalar, readable without a login
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
    // Scalar re-renders on a theme change: judge it once its title is back.
    await expectAxeClean(page, (p) =>
      expect(p.getByRole('heading', { level: 1, name: 'redlock-console HTTP API' })).toBeVisible({ timeout: 15_000 }),
    );
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
    // The reference is the heaviest page (the whole OpenAPI document rendered): on a loaded machine
    // its navigation outlasted the 5 s default twice (the URL still /login), so 15 s for both.
    await expect(page).toHaveURL(/\/api-reference$/, { timeout: 15_000 });
    await signIn(page);
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto('/');
    await page.getByRole('button', { name: 'Keyboard shortcuts (?)' }).click();
    await expect(page.getByTestId('shortcuts-dialog').getByRole('link', { name: 'API reference' })).toBeVisible();
    await page.keyboard.press('Escape');
    await page.keyboard.press('g');
    await page.keyboard.press('r');
    await expect(page).toHaveURL(/\/api-reference$/, { timeout: 15_000 });
    await expect(page.getByRole('heading', { level: 1, name: 'redlock-console HTTP API' })).toBeVisible();
    await page
      .getByRole('navigation', { name: 'Console' })
      .getByRole('link', { name: /redlock-console/ })
      .click();
    await expect(page).toHaveURL(/\/$/);
  });

  test('leaves nothing of Scalar on the console: the colour scheme follows the console theme, and back/forward restores scroll', async ({
    page,
  }) => {
    await signIn(page);
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto('/');
    const restoration = await page.evaluate(() => history.scrollRestoration);
    const toggle = page.getByTestId('theme-toggle');
    await toggle.click();
    await expect(toggle).toHaveAttribute('title', 'Theme: dark');
    await page.goto('/api-reference');
    await expect(page.getByRole('heading', { level: 1, name: 'redlock-console HTTP API' })).toBeVisible({ timeout: 15_000 });
    // What Scalar does to the document while it is shown (the cleanup below is not vacuous).
    await expect(page.locator('body')).toHaveClass(/\bdark-mode\b/);
    expect(await page.evaluate(() => history.scrollRestoration)).toBe('manual');

    await page
      .getByRole('navigation', { name: 'Console' })
      .getByRole('link', { name: /redlock-console/ })
      .click();
    await expect(page).toHaveURL(/\/$/);
    await expect(page.getByRole('navigation', { name: 'Main' })).toBeVisible();
    const state = () =>
      page.evaluate(() => ({
        colorScheme: getComputedStyle(document.body).colorScheme,
        bodyClass: document.body.className,
        scrollRestoration: history.scrollRestoration,
      }));
    expect(await state()).toEqual({ colorScheme: 'dark', bodyClass: '', scrollRestoration: restoration });
    await page.getByTestId('theme-toggle').click();
    await expect(page.getByTestId('theme-toggle')).toHaveAttribute('title', 'Theme: light');
    expect(await state()).toEqual({ colorScheme: 'light', bodyClass: '', scrollRestoration: restoration });
    // Back to the system theme for the tests after this one.
    await page.getByTestId('theme-toggle').click();
    await expect(page.getByTestId('theme-toggle')).toHaveAttribute('title', 'Theme: system');
  });

  test("names each example card after its operation, keeping the card's own name", async ({ page }) => {
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto('/api-reference');
    await expect(page.getByRole('heading', { level: 1, name: 'redlock-console HTTP API' })).toBeVisible({ timeout: 15_000 });
    // Scalar names a card by its status-code tabs (aria-labelledby): that name stays, the
    // operation's follows it.
    const cards = page.locator('section .response-card[role="region"]');
    await expect(cards.first()).toHaveAttribute('data-operation-labelled', '');
    for (const card of await cards.all()) {
      const operation = await card.evaluate((el) => {
        const section = el.parentElement!.closest('section')!;
        return document.getElementById(section.getAttribute('aria-labelledby')!)!.textContent!.trim();
      });
      await expect(card).toHaveAccessibleName(new RegExp(`^Status: .*${operation.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`));
    }
    // The tag sections (named after their tag, unique already) keep their own labelling.
    const tagSection = page.locator('.tag-section-container[role="region"]').first();
    await expect(tagSection).toHaveAttribute('aria-labelledby', /\S/);
    await expect(tagSection).not.toHaveAttribute('data-operation-labelled');

    // A card named by several ids (and an aria-label it overrides), and another region beside it,
    // as Scalar may render them: the card keeps both ids and gains the operation's heading; the
    // other region is not an example card and keeps its name.
    await page.getByTestId('api-reference').evaluate((root) => {
      const section = document.createElement('section');
      section.id = 'e2e-fixture';
      section.setAttribute('aria-labelledby', 'e2e-op');
      section.innerHTML =
        '<h3 id="e2e-op">Fixture operation</h3><span id="e2e-a">Example</span> <span id="e2e-b">Responses</span>' +
        '<div role="region" class="response-card" aria-label="overridden" aria-labelledby="e2e-a e2e-b">card</div>' +
        '<div role="region" aria-label="Another region">other</div>';
      root.append(section);
    });
    const fixture = page.locator('#e2e-fixture');
    await expect(fixture.getByRole('region', { name: 'Example Responses Fixture operation', exact: true })).toBeAttached();
    await expect(fixture.getByRole('region', { name: 'Another region', exact: true })).toBeAttached();
    await fixture.evaluate((el) => el.remove());
  });
});
