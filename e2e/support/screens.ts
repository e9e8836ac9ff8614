import type { Page } from '@playwright/test';

/** Save the current screen in both themes under test-results/screens/ (CI keeps them). */
export async function saveScreens(page: Page, name: string): Promise<void> {
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.screenshot({ path: `test-results/screens/${name}-${scheme}.png`, fullPage: true });
  }
  await page.emulateMedia({ colorScheme: null });
}
