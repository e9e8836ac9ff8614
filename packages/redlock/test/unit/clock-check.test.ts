import { describe, expect, it } from 'vitest';
import { allowedDriftMs, checkClock, clockCountsOut, clockExcessMs, clockJumpRecorded, RATE_WINDOW_MS } from '../../src/clock-check';
import type { LockNode } from '../../src/node';

// The clock check's arithmetic (clock-check.ts); what a real redis-server whose clock is moved does
// is in redlock-rollback.test.ts.

const node = () => ({ clock: { last: null, base: null, jumpPending: false } }) as unknown as LockNode;

describe('the clock check (src/clock-check.ts)', () => {
  it('allows the validity its own drift: driftFactor × elapsed + 2 ms', () => {
    expect(allowedDriftMs(0, 0.01)).toBe(2);
    expect(allowedDriftMs(60_000, 0.01)).toBe(602);
  });

  it('a node whose clock keeps time with ours is never flagged, however slow the round trips', () => {
    const n = node();
    const offset = 1_700_000_000_000;
    // Readings 1 s apart, each taken somewhere inside a round trip of up to 50 ms.
    for (let i = 0; i < 120; i++) {
      const sent = i * 1_000;
      const read = sent + (i % 5) * 10;
      const ranAt = sent + ((read - sent) * (i % 3)) / 2;
      expect(checkClock(n, offset + ranAt, sent, read, 0.01)).toBe(0);
    }
  });

  it('a step forward or back beyond the allowance is flagged, and the references start again', () => {
    const n = node();
    expect(checkClock(n, 5_000, 0, 1, 0.01)).toBe(0);
    // 100 ms later our time, 150 ms later the node's: 50 ms more than the allowance (3 ms) allows.
    const excess = checkClock(n, 5_150, 100, 101, 0.01);
    expect(excess).toBeGreaterThan(40);
    expect(n.clock).toEqual({ last: null, base: null, jumpPending: true });
    // The quarantine is written (its check answered): the next reading is the new baseline. Back by an hour.
    clockJumpRecorded(n);
    expect(checkClock(n, 10_000, 200, 201, 0.01)).toBe(0);
    expect(checkClock(n, 10_000 - 3_600_000 + 100, 300, 301, 0.01)).toBeGreaterThan(3_500_000);
  });

  it('a jump seen stays seen until its quarantine is written: every reading meanwhile counts the node out, one without TIME too', () => {
    const n = node();
    expect(checkClock(n, 5_000, 0, 1, 0.01)).toBe(0);
    expect(checkClock(n, 15_000, 100, 101, 0.01)).toBeGreaterThan(9_000);
    // A probe that was on the wire before the check that writes the quarantine: no reference left,
    // and a clock that looks steady from here, yet it counts the node out.
    expect(checkClock(n, 15_100, 200, 201, 0.01)).toBeGreaterThan(0);
    expect(clockCountsOut(n, 15_200, 300, 301, 0.01)).toBe(true);
    expect(clockCountsOut(n, null, 300, 301, 0.01)).toBe(true);
    clockJumpRecorded(n);
    expect(clockCountsOut(n, null, 400, 401, 0.01)).toBe(false);
    expect(clockCountsOut(n, 15_400, 400, 401, 0.01)).toBe(false);
  });

  it('a step smaller than the round trip cannot be told from the round trip: not flagged (no false alarm)', () => {
    const n = node();
    expect(checkClock(n, 5_000, 0, 40, 0.01)).toBe(0);
    expect(checkClock(n, 5_130, 100, 140, 0.01)).toBe(0);
  });

  it('a clock running 5 % fast is caught by the rate reference, though each step is within the allowance', () => {
    const n = node();
    let flagged = -1;
    for (let i = 0; i <= 60 && flagged < 0; i++) {
      // One reading every 100 ms of ours; the node's clock advances 105 ms each time.
      if (checkClock(n, 1_000_000 + i * 105, i * 100, i * 100 + 1, 0.01) > 0) flagged = i;
    }
    // Consecutive readings differ by 5 ms against an allowance of 3 ms: flagged at once by the step
    // check; a slower drift (below) needs the rate reference.
    expect(flagged).toBeGreaterThan(0);
    const slow = node();
    let caught = -1;
    for (let i = 1; i <= RATE_WINDOW_MS / 1_000 && caught < 0; i++) {
      // 1.1 % fast: 11 ms more per second, within each step's allowance (1 % of 1,000 ms + 2 ms =
      // 12 ms); against the older reference the excess grows by 1 ms a second past the 2 ms.
      if (checkClock(slow, 1_000_000 + i * 1_011, i * 1_000, i * 1_000, 0.01) > 0) caught = i;
    }
    expect(caught).toBeGreaterThan(1);
  });

  it('clockExcessMs measures the surest gap between two readings', () => {
    const ref = { lo: 100, hi: 110, at: 0 };
    expect(clockExcessMs(ref, { lo: 100, hi: 110, at: 1_000 }, 1_000, 0.01)).toBeLessThan(0);
    expect(clockExcessMs(ref, { lo: 200, hi: 205, at: 1_000 }, 1_000, 0.01)).toBe(200 - 110 - 12);
  });
});
