import { join } from 'node:path';
import { expect, type Page } from '@playwright/test';

/**
 * No axe-core violation on the page as it is now, in the light and the dark theme. `settle`: what
 * the page must show again after a theme change before it is judged (a part that re-renders on
 * one, e.g. the API reference, would otherwise be judged half-loaded).
 */
export async function expectAxeClean(page: Page, settle?: (page: Page) => Promise<void>): Promise<void> {
  await page.addScriptTag({ path: join(process.cwd(), 'node_modules/axe-core/axe.min.js') });
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await settle?.(page);
    // Colours that transition on a theme change are read once they have arrived, not half-way.
    await page.evaluate(() =>
      Promise.all(
        document
          .getAnimations()
          .filter((a) => a.effect?.getTiming().iterations !== Infinity)
          .map((a) => a.finished.catch(() => undefined)),
      ),
    );
    const violations = await page.evaluate(async () => {
      const axe = (
        window as unknown as {
          axe: { run(context: Document): Promise<{ violations: Array<{ id: string; help: string; nodes: Array<{ target: string[] }> }> }> };
        }
      ).axe;
      const result = await axe.run(document);
      return result.violations.map((v) => ({ id: v.id, help: v.help, targets: v.nodes.slice(0, 5).map((n) => n.target.join(' ')) }));
    });
    expect(violations, `${scheme} theme: ${JSON.stringify(violations, null, 2)}`).toEqual([]);
  }
  await page.emulateMedia({ colorScheme: null });
}
