import type { Locator, Page } from '@playwright/test';
import { expect } from './test';

/**
 * A table that stacks into cards on a phone (`.table-stack`, app/globals.css), seen at a phone's
 * width inside its scroll `region`: nothing scrolls sideways (neither the page nor the region),
 * each card's cells stand one under another, each led by its column's name (the cell's
 * data-label), and it is still a table to a screen reader: its `columns` as column heads, a row
 * per card (`rows`) besides the head's, and a cell per column in each.
 */
export async function expectStackedCards(page: Page, region: Locator, columns: string[], rows: number): Promise<void> {
  const doc = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
  expect(doc.scroll, 'the page scrolls sideways').toBeLessThanOrEqual(doc.client);
  const inner = await region.evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth }));
  expect(inner.scroll, 'the table scrolls sideways inside its region').toBeLessThanOrEqual(inner.client + 1);
  const cells = await region
    .locator('tbody tr')
    .first()
    .locator('td')
    .evaluateAll((tds) =>
      tds.map((td) => ({
        label: getComputedStyle(td, '::before').content,
        top: td.getBoundingClientRect().top,
        bottom: td.getBoundingClientRect().bottom,
      })),
    );
  expect(cells.map((c) => c.label)).toEqual(columns.map((name) => `"${name}"`));
  for (let i = 1; i < cells.length; i++)
    expect(cells[i]!.top, `cell ${i} stands under cell ${i - 1}`).toBeGreaterThanOrEqual(cells[i - 1]!.bottom - 1);
  const table = region.getByRole('table');
  await expect(table.getByRole('columnheader')).toHaveText(columns);
  await expect(table.getByRole('row')).toHaveCount(rows + 1);
  await expect(table.getByRole('cell')).toHaveCount(rows * columns.length);
}
