import { connect } from 'node:net';
import type { Page } from '@playwright/test';
import { expect, test } from './support/test';
import { E2E_LOGIN } from '../playwright.config';
import { signIn } from './support/login';

/**
 * The security checks against the built console, where a browser (or a plain HTTP client on a real socket) is
 * the attacker: security headers and a CSP that the console's own pages live with, framing, the
 * login limit behind no proxy, a chunked body over the limit.
 */

const SCREENS = ['/', '/locks', '/nodes', '/playground', '/scenarios', '/audit', '/chaos'];

function directives(csp: string): Map<string, string> {
  return new Map(
    csp
      .split(';')
      .map((d) => d.trim())
      .filter(Boolean)
      .map((d) => {
        const space = d.indexOf(' ');
        return space < 0 ? [d, ''] : [d.slice(0, space), d.slice(space + 1)];
      }),
  );
}

/** CSP violations the page reports (collected before any of its scripts run). */
async function watchViolations(page: Page): Promise<string[]> {
  const seen: string[] = [];
  page.on('console', (msg) => {
    if (/Content Security Policy|Refused to (execute|load|apply|frame)/i.test(msg.text())) seen.push(msg.text());
  });
  await page.exposeFunction('__cspViolation', (text: string) => seen.push(text));
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      (window as unknown as { __cspViolation(text: string): void }).__cspViolation(`${e.violatedDirective} blocked ${e.blockedURI}`);
    });
  });
  return seen;
}

test.describe('security headers', () => {
  test('a page gets a nonce CSP without unsafe-inline scripts, no framing, nosniff, referrer and permissions policies', async ({
    page,
  }) => {
    const first = (await page.goto('/login'))!.headers();
    const second = (await page.goto('/login'))!.headers();
    const csp = directives(first['content-security-policy'] ?? '');
    expect(csp.get('script-src')).toMatch(/'nonce-[A-Za-z0-9+/=]{16,}'/);
    expect(csp.get('script-src')).not.toContain("'unsafe-inline'");
    expect(csp.get('script-src')).not.toContain("'unsafe-eval'");
    expect(csp.get('frame-ancestors')).toBe("'none'");
    expect(csp.get('object-src')).toBe("'none'");
    expect(second['content-security-policy']).not.toBe(first['content-security-policy']); // a fresh nonce per response
    expect(first['x-frame-options']).toBe('DENY');
    expect(first['x-content-type-options']).toBe('nosniff');
    expect(first['referrer-policy']).toBe('no-referrer');
    expect(first['permissions-policy']).toContain('camera=()');
    expect(first['strict-transport-security']).toBeUndefined(); // plain http: no HSTS
  });

  test('every HTML answer carries a CSP, the 404 pages of odd paths too (/favicon.ico.html, /_next/imagefoo had none)', async ({
    request,
  }) => {
    const paths = [
      '/favicon.ico.html',
      '/favicon.icox',
      '/_next/imagefoo',
      '/_next/image.html',
      '/_next/staticfoo',
      '/_next/static/nope.html',
      '/api/nope',
      '/apix',
      '/no/such/page',
      '/login/nope',
      '/%2e%2e/x',
    ];
    let html = 0;
    for (const path of paths) {
      const res = await request.get(path, { maxRedirects: 0 });
      const h = res.headers();
      if (!(h['content-type'] ?? '').includes('text/html')) continue;
      html++;
      const csp = directives(h['content-security-policy'] ?? '');
      expect(csp.size, `${path} (${res.status()}) has no CSP`).toBeGreaterThan(0);
      // Scripts: only with this response's nonce, or none at all.
      expect(csp.get('script-src') ?? csp.get('default-src'), path).not.toContain("'unsafe-inline'");
      expect(csp.get('frame-ancestors'), path).toBe("'none'");
      expect(h['x-frame-options'], path).toBe('DENY');
    }
    expect(html).toBeGreaterThanOrEqual(6);
  });

  test('an API response gets them too, with a CSP that allows nothing; HSTS when served over https', async ({ request }) => {
    for (const path of ['/api/health', '/api/auth/me']) {
      const res = await request.get(path);
      const h = res.headers();
      expect(h['content-security-policy'], path).toContain("default-src 'none'");
      expect(h['content-security-policy'], path).toContain("frame-ancestors 'none'");
      expect(h['x-frame-options'], path).toBe('DENY');
      expect(h['x-content-type-options'], path).toBe('nosniff');
      expect(h['referrer-policy'], path).toBe('no-referrer');
      expect(h['strict-transport-security'], path).toBeUndefined();
    }
    const tls = await request.get('/api/health', { headers: { 'x-forwarded-proto': 'https' } });
    expect(tls.headers()['strict-transport-security']).toMatch(/max-age=\d{7,}/);
    const page = await request.get('/login', { headers: { 'x-forwarded-proto': 'https' } });
    expect(page.headers()['strict-transport-security']).toMatch(/max-age=\d{7,}/);
    expect(page.headers()['content-security-policy']).toContain('upgrade-insecure-requests');
  });

  test('every console screen renders and hydrates under the CSP with no violation', async ({ page }) => {
    const violations = await watchViolations(page);
    await signIn(page);
    for (const path of SCREENS) {
      await page.goto(path);
      // The user menu appears only once the client-side code has run and fetched the session.
      await expect(page.getByTestId('user-menu'), path).toBeVisible();
      await expect(page.getByTestId('role-badge'), path).toHaveText('operator');
    }
    await page.goto('/login');
    await expect(page.getByRole('button', { name: 'Sign in' })).toBeEnabled();
    expect(violations).toEqual([]);
  });

  test('injected markup runs no script: neither an inline event handler nor an inline script', async ({ page }) => {
    const violations = await watchViolations(page);
    await page.goto('/login');
    await page.evaluate(() => {
      // What an HTML injection would add: an inline event handler, and an inline script the parser inserts.
      document.body.insertAdjacentHTML('beforeend', '<img src="data:," onerror="window.__injected = 1">');
    });
    const iframe = await page.evaluate(async () => {
      const f = document.createElement('iframe');
      f.srcdoc = '<script>parent.__injected = 3</script>'; // srcdoc inherits the page's CSP
      document.body.appendChild(f);
      await new Promise((r) => f.addEventListener('load', r));
      return (window as unknown as { __injected?: number }).__injected ?? null;
    });
    expect(iframe).toBeNull();
    expect(await page.evaluate(() => (window as unknown as { __injected?: number }).__injected ?? null)).toBeNull();
    await expect.poll(() => violations.length).toBeGreaterThan(0);
  });

  test('another site cannot frame a signed-in console screen (clickjacking)', async ({ page, baseURL }) => {
    await signIn(page);
    // A page of another origin (about:blank here) frames the lock screen with its Force-release buttons.
    await page.setContent(`<iframe id="victim" src="${baseURL}/locks" width="1200" height="800"></iframe>`);
    await page.locator('#victim').waitFor();
    await expect
      .poll(
        async () => {
          const frame = page.frames().find((f) => f !== page.mainFrame());
          if (!frame) return 'no frame yet';
          const text = await frame.evaluate(() => document.body?.innerText ?? '').catch(() => '');
          return text.includes('redlock-console') || text.includes('Sign out') ? 'rendered' : 'blocked';
        },
        { timeout: 10_000 },
      )
      .toBe('blocked');
  });
});

test.describe('the real socket', () => {
  test('rotating X-Forwarded-For does not bypass the login limit (no proxy trusted)', async ({ request }) => {
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) {
      const res = await request.post('/api/auth/login', {
        data: { username: 'e2e-xff-nobody', password: 'wrong' },
        headers: { 'x-forwarded-for': `10.66.${i}.${i + 1}` },
      });
      statuses.push(res.status());
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429]);
  });

  test('a chunked body over the limit is answered 413 long before it is all sent', async ({ baseURL }) => {
    const url = new URL(baseURL!);
    // A raw socket: keep sending 64 KiB chunks (up to 512 MB) until the server answers.
    const result = await new Promise<{ head: string; sentBytes: number }>((resolve, reject) => {
      const socket = connect(Number(url.port), url.hostname);
      let sent = 0;
      let answer = '';
      let done = false;
      const finish = () => {
        if (done) return;
        done = true;
        socket.destroy();
        resolve({ head: answer.split('\r\n')[0] ?? '', sentBytes: sent });
      };
      socket.on('data', (data) => {
        answer += data.toString('latin1');
        if (answer.includes('\r\n\r\n')) finish();
      });
      socket.on('error', () => (answer ? finish() : undefined)); // EPIPE/ECONNRESET once the server closed: expected
      socket.on('close', () => (answer ? finish() : reject(new Error(`closed without an answer after ${sent} bytes`))));
      const chunk = Buffer.concat([Buffer.from('10000\r\n'), Buffer.alloc(0x10000, 0x20), Buffer.from('\r\n')]);
      socket.write(
        `POST /api/auth/login HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
      );
      const pump = () => {
        while (!done && !socket.destroyed && sent < 512 * 1024 * 1024) {
          sent += 0x10000;
          if (!socket.write(chunk)) return void socket.once('drain', pump);
        }
      };
      pump();
    });
    expect(result.head).toMatch(/^HTTP\/1\.1 413 /);
    expect(result.sentBytes).toBeLessThan(64 * 1024 * 1024); // refused long before the 512 MB were sent
  });
});

test.describe('login next: never off the console', () => {
  async function signInThroughForm(page: Page): Promise<void> {
    await page.getByLabel('Username').fill(E2E_LOGIN.username);
    await page.getByLabel('Password').fill(E2E_LOGIN.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }

  for (const next of [
    '/\\evil.example',
    '/%5Cevil.example',
    '/\t/evil.example',
    '//evil.example',
    'https://evil.example',
    '/.//evil.example',
  ]) {
    test(`next=${JSON.stringify(next)} lands on the console's home`, async ({ page, baseURL }) => {
      await page.route(
        (url) => url.hostname.endsWith('evil.example'),
        (route) => route.fulfill({ status: 200, contentType: 'text/html', body: '<h1>evil</h1>' }),
      );
      await page.goto(`/login?next=${encodeURIComponent(next)}`);
      await signInThroughForm(page);
      await expect(page.getByTestId('user-menu')).toBeVisible();
      expect(new URL(page.url()).origin).toBe(new URL(baseURL!).origin);
      expect(new URL(page.url()).pathname).toBe('/');
    });
  }

  test('a path on the console is honoured', async ({ page }) => {
    await page.goto(`/login?next=${encodeURIComponent('/audit?action=login')}`);
    await signInThroughForm(page);
    await expect(page).toHaveURL(/\/audit\?action=login$/);
    await expect(page.getByTestId('user-menu')).toBeVisible();
  });
});
