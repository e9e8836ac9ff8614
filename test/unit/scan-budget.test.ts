import { describe, expect, it } from 'vitest';
import { HttpError } from '../../lib/server/http/errors';
import { ScanBudget, SCANS_PER_WINDOW, WINDOW_MS } from '../../lib/server/scan-budget';

/**
 * The full-scan budget's rules without masters (test/integration/security-scan-budget.test.ts runs
 * them through the API on real ones): per caller in a sliding window, one scan at a time.
 */
function refusal(fn: () => unknown): HttpError {
  try {
    fn();
  } catch (err) {
    if (err instanceof HttpError) return err;
    throw err;
  }
  throw new Error('expected a 429');
}

describe('ScanBudget', () => {
  it('lets one caller start SCANS_PER_WINDOW scans per window, then answers 429 with the wait', () => {
    const budget = new ScanBudget();
    const t0 = 1_000_000;
    for (let i = 0; i < SCANS_PER_WINDOW; i++) budget.take('session:viewer', 'app:*', t0 + i).release();
    const err = refusal(() => budget.take('session:viewer', 'app:*', t0 + 10_000));
    expect(err.status).toBe(429);
    expect(err.headers['retry-after']).toBe(String(Math.ceil((WINDOW_MS - 10_000) / 1000)));
    expect(err.message).toMatch(/full scans/);
    // Another caller's budget is its own; the first caller's comes back as the window slides.
    budget.take('session:operator', 'app:*', t0 + 10_000).release();
    budget.take('session:viewer', 'app:*', t0 + WINDOW_MS + 1).release();
  });

  it('runs one full scan at a time: another pattern meanwhile is refused, nothing spent', () => {
    const budget = new ScanBudget(2);
    const first = budget.take('session:a', 'app:*', 0);
    const err = refusal(() => budget.take('session:b', 'other:*', 1));
    expect(err.status).toBe(429);
    expect(err.headers['retry-after']).toBe('1');
    expect(err.message).toMatch(/another full scan/);
    first.release();
    first.release(); // twice is harmless and does not free a later scan
    const second = budget.take('session:b', 'other:*', 2);
    first.release();
    expect(() => budget.take('session:b', 'x:*', 3)).toThrow(/another full scan/);
    second.release();
    // b's two refused attempts cost nothing: one taken so far, so one more of its 2 is left.
    budget.take('session:b', 'x:*', 4).release();
    expect(() => budget.take('session:b', 'x:*', 5)).toThrow(/at most 2 full scans/);
  });
});
