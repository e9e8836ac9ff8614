import { describe, expect, it } from 'vitest';
import {
  allowedDriftMs,
  checkClock,
  clockCountsOut,
  clockExcessMs,
  clockJumpRecorded,
  RATE_WINDOW_MS,
  timeReplyMs,
} from '../../src/clock-check';
import type { LockNode } from '../../src/node';

// The clock check's arithmetic (clock-check.ts); what a real redis-server whose clock is moved does
// is in redlock-rollback.test.ts.

const node = () => ({ clock: { last: null, base: null, jumpPending: false } }) as unknown as LockNode;
/** The defaults: 1 % drift, a lease ceiling of 60 s. */
const A = { driftFactor: 0.01, maxTtlMs: 60_000 };

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
      expect(checkClock(n, offset + ranAt, sent, read, A)).toBe(0);
    }
  });

  it('a step forward or back beyond the allowance is flagged, and the reading that shows it is the new baseline', () => {
    const n = node();
    expect(checkClock(n, 5_000, 0, 1, A)).toBe(0);
    // 100 ms later our time, 150 ms later the node's: 50 ms more than the allowance (3 ms) allows.
    const excess = checkClock(n, 5_150, 100, 101, A);
    expect(excess).toBeGreaterThan(40);
    const jumped = { lo: 5_150 - 101, hi: 5_150 - 100, at: 100 };
    expect(n.clock).toEqual({ last: jumped, base: jumped, jumpPending: true });
    // The quarantine is written (its check answered): a clock that keeps time since the jump is not flagged…
    clockJumpRecorded(n);
    expect(checkClock(n, 5_250, 200, 201, A)).toBe(0);
    // …and a step back by an hour is.
    expect(checkClock(n, 5_250 - 3_600_000 + 100, 300, 301, A)).toBeGreaterThan(3_500_000);
  });

  it('a second step between the quarantine being written and the next reading is measured against the first jump, not taken for a baseline', () => {
    const n = node();
    expect(checkClock(n, 5_000, 0, 1, A)).toBe(0);
    expect(checkClock(n, 25_100, 100, 101, A)).toBeGreaterThan(19_000);
    clockJumpRecorded(n);
    // 5 s more, before any reading: the quarantine, counted on the node's clock, would end 5 s early.
    expect(checkClock(n, 30_200, 200, 201, A)).toBeGreaterThan(4_900);
  });

  it('the allowance stops growing at the lease ceiling: a step inside a lease is seen after any idle time', () => {
    // 150 s between two readings at 1 %: 1,502 ms allowed uncapped, so a 1.25 s step (which expires
    // a 1 s lease early) went unseen; with a 6 s ceiling the allowance is 62 ms.
    expect(allowedDriftMs(150_000, 0.01)).toBe(1_502);
    expect(allowedDriftMs(150_000, 0.01, 6_000)).toBe(62);
    const n = node();
    const six = { driftFactor: 0.01, maxTtlMs: 6_000 };
    expect(checkClock(n, 5_000, 0, 1, six)).toBe(0);
    expect(checkClock(n, 5_000 + 150_000 + 1_250, 150_000, 150_001, six)).toBeGreaterThan(1_000);
  });

  it('a wide reading (a slow round trip) does not replace a sharper reference: a step inside its width is still seen', () => {
    const n = node();
    expect(checkClock(n, 5_000, 0, 1, A)).toBe(0);
    // 61 s later the node stalls 6 s while a probe is on the wire: a reading 6 s wide, agreeing with
    // the first; the rate reference is due for replacement too.
    expect(checkClock(n, 5_000 + 61_000, 61_000, 67_000, A)).toBe(0);
    expect(n.clock.last).toEqual({ lo: 5_000 - 1, hi: 5_000, at: 0 });
    expect(n.clock.base).toEqual({ lo: 5_000 - 1, hi: 5_000, at: 0 });
    // A 5 s step forward, read sharply: within the wide reading's width, beyond the sharp one's allowance (602 ms).
    expect(checkClock(n, 5_000 + 68_000 + 5_000, 68_000, 68_001, A)).toBeGreaterThan(4_000);
  });

  it('the check that writes a clock-jump quarantine is the reference after it when it is sharper than the reading that showed the jump', () => {
    const n = node();
    expect(checkClock(n, 5_000, 0, 1, A)).toBe(0);
    // A probe 4 s on the way (sent at 1,000, read at 5,000) shows +20 s: a reference 4 s wide.
    expect(checkClock(n, 5_000 + 20_000 + 1_000, 1_000, 5_000, A)).toBeGreaterThan(15_000);
    // The forced check, sharp, is what the quarantine is counted from.
    clockJumpRecorded(n, { nodeMs: 5_000 + 20_000 + 5_100, sentAt: 5_100, readAt: 5_101 }, A);
    expect(n.clock.last).toEqual({ lo: 25_000 - 1, hi: 25_000, at: 5_100 });
    // +3 s more: inside the wide reading's width, beyond the sharp one's allowance.
    expect(checkClock(n, 5_000 + 23_000 + 6_000, 6_000, 6_001, A)).toBeGreaterThan(2_900);
    // A forced check wider than the jumped reading does not replace it.
    const m = node();
    expect(checkClock(m, 5_000, 0, 1, A)).toBe(0);
    expect(checkClock(m, 25_100, 100, 101, A)).toBeGreaterThan(19_000);
    clockJumpRecorded(m, { nodeMs: 25_200 + 2_000, sentAt: 200, readAt: 4_200 }, A);
    expect(m.clock.last).toEqual({ lo: 25_100 - 101, hi: 25_100 - 100, at: 100 });
  });

  it('a short ceiling does not shrink the rate reference: a clock slewed at 500 ppm (NTP) is not flagged with maxTtlMs 1 s', () => {
    const n = node();
    const short = { driftFactor: 0.01, maxTtlMs: 1_000 };
    for (let i = 0; i <= 90; i++) expect(checkClock(n, 1_000_000 + i * 1_000.5, i * 1_000, i * 1_000 + 1, short)).toBe(0);
  });

  it('a jump seen stays seen until its quarantine is written: every reading meanwhile counts the node out, one without TIME too', () => {
    const n = node();
    expect(checkClock(n, 5_000, 0, 1, A)).toBe(0);
    expect(checkClock(n, 15_000, 100, 101, A)).toBeGreaterThan(9_000);
    // A probe that was on the wire before the check that writes the quarantine: a clock that looks
    // steady against the jumped reading, yet it counts the node out.
    expect(checkClock(n, 15_100, 200, 201, A)).toBeGreaterThan(0);
    expect(clockCountsOut(n, 15_200, 300, 301, A)).toBe(true);
    expect(clockCountsOut(n, null, 300, 301, A)).toBe(true);
    clockJumpRecorded(n);
    expect(clockCountsOut(n, null, 400, 401, A)).toBe(false);
    expect(clockCountsOut(n, 15_300, 400, 401, A)).toBe(false);
  });

  it('a step smaller than the round trip cannot be told from the round trip: not flagged (no false alarm)', () => {
    const n = node();
    expect(checkClock(n, 5_000, 0, 40, A)).toBe(0);
    expect(checkClock(n, 5_130, 100, 140, A)).toBe(0);
  });

  it('a clock running 5 % fast is caught by the rate reference, though each step is within the allowance', () => {
    const n = node();
    let flagged = -1;
    for (let i = 0; i <= 60 && flagged < 0; i++) {
      // One reading every 100 ms of ours; the node's clock advances 105 ms each time.
      if (checkClock(n, 1_000_000 + i * 105, i * 100, i * 100 + 1, A) > 0) flagged = i;
    }
    // Consecutive readings differ by 5 ms against an allowance of 3 ms: flagged at once by the step
    // check; a slower drift (below) needs the rate reference.
    expect(flagged).toBeGreaterThan(0);
    const slow = node();
    let caught = -1;
    // Our monotonic clock far from 0, as in a process that has run for a while.
    const t0 = 500_000;
    for (let i = 1; i <= RATE_WINDOW_MS / 1_000 && caught < 0; i++) {
      // 1.1 % fast: 11 ms more per second, within each step's allowance (1 % of 1,000 ms + 2 ms =
      // 12 ms); against the older reference the excess grows by 1 ms a second past the 2 ms.
      if (checkClock(slow, 1_000_000 + i * 1_011, t0 + i * 1_000, t0 + i * 1_000, A) > 0) caught = i;
    }
    expect(caught).toBeGreaterThan(1);
  });

  it('the rate reference moves on once a window old: a clock 0.9 % fast (within the 1 %) is never flagged, however long', () => {
    const n = node();
    // Against a reference 150 s old, 0.9 % is 1,350 ms, past the 602 ms a 60 s ceiling allows.
    for (let i = 0; i <= 150; i++) expect(checkClock(n, 1_000_000 + i * 1_009, 500_000 + i * 1_000, 500_000 + i * 1_000, A)).toBe(0);
  });

  it('a reading wider than the reference widened by the drift allowed since (not by more) does not replace it', () => {
    const n = node();
    expect(checkClock(n, 5_000, 400_000, 400_001, A)).toBe(0);
    // 30 s later: the sharp reference widened by 1 % of 30 s + 2 ms is 303 ms; a 400 ms wide reading.
    expect(checkClock(n, 5_000 + 30_000 + 200, 430_000, 430_400, A)).toBe(0);
    expect(n.clock.last).toEqual({ lo: 5_000 - 400_001, hi: 5_000 - 400_000, at: 400_000 });
  });

  it('a TIME reply that is not two numbers is no reading (null), either part', () => {
    expect(timeReplyMs('1700000000', '250000')).toBe(1_700_000_000_250);
    expect(timeReplyMs('x', '250000')).toBeNull();
    expect(timeReplyMs('1700000000', 'y')).toBeNull();
  });

  it('clockExcessMs measures the surest gap between two readings', () => {
    const ref = { lo: 100, hi: 110, at: 0 };
    expect(clockExcessMs(ref, { lo: 100, hi: 110, at: 1_000 }, 1_000, 0.01)).toBeLessThan(0);
    expect(clockExcessMs(ref, { lo: 200, hi: 205, at: 1_000 }, 1_000, 0.01)).toBe(200 - 110 - 12);
  });
});
