import { expect, type Page } from '@playwright/test';
import { E2E_LOGIN, E2E_VIEWER } from '../../playwright.config';

/** Sign in through the API (the session cookie lands in the page's browser context). */
export async function signIn(page: Page, who: 'operator' | 'viewer' = 'operator'): Promise<void> {
  const login = who === 'operator' ? E2E_LOGIN : E2E_VIEWER;
  const res = await page.request.post('/api/auth/login', { data: login });
  expect(res.status(), await res.text()).toBe(200);
}
