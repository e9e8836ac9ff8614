import { describe, expect, it, vi } from 'vitest';

const compared = vi.hoisted(() => ({ calls: 0 }));
vi.mock('../../lib/server/auth/passwords', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../lib/server/auth/passwords')>();
  return { ...original, sameSecret: (a: string | null, b: string) => (compared.calls++, original.sameSecret(a, b)) };
});

const { checkCsrf } = await import('../../lib/server/http/request-checks');

function req(token: string | null): Request {
  return new Request('http://console.test/api/x', {
    method: 'POST',
    headers: { host: 'console.test', origin: 'http://console.test', ...(token === null ? {} : { 'x-csrf-token': token }) },
  });
}

/** The CSRF token comparison was `!==` (its time depends on the common prefix). */
describe('CSRF token check', () => {
  it('compares in constant time (through sameSecret), and refuses missing, wrong, prefix and longer tokens', () => {
    const csrf = 'q2Zk1v0Hc3lJm5x8TtRw7bYp';
    expect(() => checkCsrf(req(csrf).headers, csrf, 'console.test')).not.toThrow();
    for (const wrong of [null, '', 'x', csrf.slice(0, -1), `${csrf}x`, csrf.toUpperCase()]) {
      expect(() => checkCsrf(req(wrong).headers, csrf, 'console.test'), String(wrong)).toThrow(/x-csrf-token/);
    }
    expect(compared.calls).toBe(7);
  });
});
