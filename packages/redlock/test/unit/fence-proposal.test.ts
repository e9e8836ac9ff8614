import { describe, expect, it } from 'vitest';
import { aheadFence, FenceAhead, nodesClockOffset, noteRegister, proposeFence } from '../../src/fence-ahead';
import type { Round } from '../../src/round';
import type { Vote } from '../../src/votes';

// The guess behind a fence proposed with the grant (fence-ahead.ts): only its quality is at stake
// here (whether a proposal stands is decided by the registers the voters read, tested on real
// redis-server in redlock-fence-ahead.test.ts), so these are the rules of the guess itself.

const fresh = () => ({ fenceHigh: 0, fenceHighAt: 0 });
const WALL = 1_795_977_437_713; // ms

/** A node's clock state as clock-check.ts keeps it: its last TIME reading as an offset interval (ms). */
const node = (lo: number | null, hi = lo, jumpPending = false) => ({
  clock: { last: lo === null ? null : { lo, hi: hi!, at: 0 }, base: null, jumpPending },
});

describe('the fence a client proposes', () => {
  it("follows the nodes' clock in µs (our monotonic clock plus their offset) while no register read is ahead of it", () => {
    const c = fresh();
    expect(proposeFence(c, WALL - 10, 10)).toBe(WALL * 1000);
    // A second attempt in the same µs is still above the first.
    expect(proposeFence(c, WALL - 10, 10)).toBe(WALL * 1000 + 1);
    // 1 ms later: the last proposal moved on by 1,000 µs, + 1 (the nodes' clock is not ahead of it).
    expect(proposeFence(c, WALL - 10, 11)).toBe((WALL + 1) * 1000 + 2);
    // An offset that moved further than our monotonic clock (the nodes' clocks stepped forward) leads.
    expect(proposeFence(c, WALL - 10 + 50, 12)).toBe((WALL + 52) * 1000);
  });

  it("makes no proposal without the nodes' clock (fewer than a quorum of nodes read since they connected): the fence round runs", () => {
    const c = fresh();
    noteRegister(c, WALL * 1000, 0);
    expect(proposeFence(c, null, 1)).toBeNull();
    // Nothing was reserved.
    expect(c).toEqual({ fenceHigh: WALL * 1000, fenceHighAt: 0 });
  });

  it("reads the nodes' clock as the lower median of their readings' midpoints, from a quorum of nodes with a reading, leaving out a node whose jump is pending", () => {
    expect(nodesClockOffset([node(10, 20), node(100, 100), node(30), node(null), node(7)], 3)).toBe(15);
    // Two nodes far ahead (a minority) do not move it.
    expect(nodesClockOffset([node(0), node(1), node(2), node(60_000), node(90_000)], 3)).toBe(2);
    // Four readings: the lower of the two middle ones.
    expect(nodesClockOffset([node(4), node(1), node(3), node(2), node(null)], 3)).toBe(2);
    // Fewer than a quorum of readings, or a jump not yet quarantined: not counted.
    expect(nodesClockOffset([node(1), node(2), node(null), node(null), node(null)], 3)).toBeNull();
    expect(nodesClockOffset([node(1), node(2), node(3, 3, true), node(null), node(null)], 3)).toBeNull();
    expect(nodesClockOffset([node(1), node(2), node(500, 500, true), node(3), node(null)], 3)).toBe(2);
  });

  it("adopts a register read ahead of the nodes' clock (an older client whose clock ran ahead raised it, or a hand) and moves it on by the µs elapsed since the read", () => {
    const c = fresh();
    const ahead = (WALL + 60_000) * 1000;
    noteRegister(c, ahead, 100);
    // 2.5 ms later on the monotonic clock: the register read, moved on by 2,500 µs, + 1.
    expect(proposeFence(c, WALL - 100, 102.5)).toBe(ahead + 2_500 + 1);
  });

  it('ignores a read below what it already expects the registers to be by now', () => {
    const c = fresh();
    noteRegister(c, 5_000_000, 0);
    noteRegister(c, 5_000_500, 1); // the projection is 5,001,000 by now: this read is older news
    expect(c).toEqual({ fenceHigh: 5_000_000, fenceHighAt: 0 });
    noteRegister(c, 5_002_000, 1);
    expect(c).toEqual({ fenceHigh: 5_002_000, fenceHighAt: 1 });
  });

  it("uses the monotonic clock by default: a first proposal is within a second of the nodes' clock read against it", () => {
    const offset = performance.timeOrigin; // nodes whose clock is ours
    const before = Date.now() * 1000;
    const p = proposeFence(fresh(), offset)!;
    expect(p).toBeGreaterThanOrEqual(before - 1_000_000);
    expect(p).toBeLessThanOrEqual(Date.now() * 1000 + 1_000_000);
  });

  it('makes no proposal above 2^52 (a fence must stay an exact integer); 2^52 itself is made', () => {
    const edge = fresh();
    noteRegister(edge, 2 ** 52 - 1, 0);
    expect(proposeFence(edge, 0, 0)).toBe(2 ** 52);
    const c = fresh();
    noteRegister(c, 2 ** 52, 0);
    expect(proposeFence(c, WALL, 0)).toBeNull();
    expect(proposeFence(fresh(), 2 ** 52 / 1000 + 1, 0)).toBeNull();
    expect(proposeFence(fresh(), Number.NaN, 0)).toBeNull();
  });
});

/** A grant round as aheadFence reads it: each node's vote and the register it read. */
function round(votes: ReadonlyArray<'for' | 'against'>, values: readonly number[]): Round {
  const v = votes.map((vote, i): Vote => ({ node: i + 1, label: `n${i + 1}`, vote, reason: vote === 'for' ? 'ok' : 'contended' }));
  return { votes: v, values } as unknown as Round;
}

function ahead(fence: number, confirmed: readonly boolean[]): FenceAhead {
  const a = new FenceAhead(fence, 'p:epoch', ['p:lock:r'], 'tok');
  confirmed.forEach((c, i) => (a.confirmed[i] = c));
  return a;
}

describe('when a proposed fence stands (aheadFence)', () => {
  it('a quorum of voters that read a register below it and confirmed its raise: it is the fence', () => {
    expect(aheadFence(round(['for', 'for', 'for', 'against', 'against'], [5, 5, 5, 0, 0]), ahead(9, [true, true, true]), 3)).toBe(9);
  });

  it('a voter whose raise did not confirm does not count', () => {
    expect(aheadFence(round(['for', 'for', 'for', 'against', 'against'], [5, 5, 5, 0, 0]), ahead(9, [true, true, false]), 3)).toBeNull();
  });

  it('a voter that read a register at or above it does not count (equal: the fence would repeat)', () => {
    expect(aheadFence(round(['for', 'for', 'for'], [5, 5, 9]), ahead(9, [true, true, true]), 3)).toBeNull();
    expect(aheadFence(round(['for', 'for', 'for'], [5, 5, 8]), ahead(9, [true, true, true]), 3)).toBe(9);
  });

  it('a node that voted against counts for nothing, whatever its raise and register', () => {
    expect(aheadFence(round(['for', 'for', 'against'], [5, 5, 0]), ahead(9, [true, true, true]), 3)).toBeNull();
  });

  it('no proposal: null (the fence round runs)', () => {
    expect(aheadFence(round(['for', 'for', 'for'], [5, 5, 5]), null, 3)).toBeNull();
  });
});
