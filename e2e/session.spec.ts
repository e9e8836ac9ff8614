import { expect, test } from './support/test';
import { signIn } from './support/login';
import { expectAxeClean } from './support/axe';
import { saveScreens } from './support/screens';

/**
 * Signing out from the console's top bar: of this browser only, or everywhere (every
 * session of the user ends, in every console process, because the revocation is kept on the
 * masters). Two browser contexts stand for two devices of the same operator.
 */
test.describe('sign out', () => {
  test('"Sign out everywhere" ends the session of another device too; the menu works from the keyboard', async ({ browser }) => {
    const laptop = await browser.newContext();
    const phone = await browser.newContext();
    try {
      const a = await laptop.newPage();
      const b = await phone.newPage();
      await signIn(a);
      await signIn(b);
      await b.goto('/');
      await expect(b.getByTestId('user-menu')).toBeVisible();
      await a.goto('/');

      // Keyboard: focus the disclosure, open it with Enter, close it with Escape, open it again.
      const summary = a.getByTestId('user-menu').locator('summary', { hasText: 'Sign out' });
      await summary.focus();
      await a.keyboard.press('Enter');
      const everywhere = a.getByRole('button', { name: 'Sign out everywhere' });
      await expect(everywhere).toBeVisible();
      await expect(a.getByText('Ends every session of')).toBeVisible();
      await saveScreens(a, 'sign-out-menu');
      await expectAxeClean(a);
      await a.keyboard.press('Escape');
      await expect(everywhere).toBeHidden();
      await summary.focus();
      await a.keyboard.press('Enter');
      await everywhere.focus();
      await a.keyboard.press('Enter');
      await expect(a).toHaveURL(/\/login/);

      // The other device's cookie no longer works.
      expect((await b.request.get('/api/auth/me')).status()).toBe(401);
      await b.reload();
      await expect(b).toHaveURL(/\/login/);
    } finally {
      await laptop.close();
      await phone.close();
    }
  });

  test('"Sign out of this browser" leaves the other device signed in', async ({ browser }) => {
    const laptop = await browser.newContext();
    const phone = await browser.newContext();
    try {
      const a = await laptop.newPage();
      const b = await phone.newPage();
      await signIn(a);
      await signIn(b);
      await a.goto('/');
      await a.getByTestId('user-menu').locator('summary', { hasText: 'Sign out' }).click();
      await a.getByRole('button', { name: 'Sign out of this browser' }).click();
      await expect(a).toHaveURL(/\/login/);
      expect((await a.request.get('/api/auth/me')).status()).toBe(401);
      expect((await b.request.get('/api/auth/me')).status()).toBe(200);
    } finally {
      await laptop.close();
      await phone.close();
    }
  });
});
