import { describe, expect, it } from 'vitest';
import { aheadFence, FenceAhead, noteRegister, proposeFence } from '../../src/fence-ahead';
import type { Round } from '../../src/round';
import type { Vote } from '../../src/votes';

// The guess behind a fence proposed with the grant (fence-ahead.ts): only its quality is at stake
// here (whether a proposal stands is decided by the registers the voters read, tested on real
// redis-server in redlock-fence-ahead.test.ts), so these are the rules of the guess itself.

const fresh = () => ({ fenceHigh: 0, fenceHighAt: 0 });
const WALL = 1_795_977_437_713; // ms

describe('the fence a client proposes', () => {
  it("follows the client's wall clock in µs while no register read is ahead of it", () => {
    const c = fresh();
    expect(proposeFence(c, 10, WALL)).toBe(WALL * 1000);
    // A second attempt in the same µs is still above the first.
    expect(proposeFence(c, 10, WALL)).toBe(WALL * 1000 + 1);
    // 1 ms later: the last proposal moved on by 1,000 µs, + 1 (the wall clock is not ahead of it).
    expect(proposeFence(c, 11, WALL + 1)).toBe((WALL + 1) * 1000 + 2);
    // A wall clock that moved further than the monotonic one (a step forward) leads.
    expect(proposeFence(c, 12, WALL + 50)).toBe((WALL + 50) * 1000);
  });

  it('adopts a register read ahead of its clock (a peer whose clock runs ahead raised it) and moves it on by the µs elapsed since the read', () => {
    const c = fresh();
    const ahead = (WALL + 60_000) * 1000;
    noteRegister(c, ahead, 100);
    // 2.5 ms later on the monotonic clock: the register read, moved on by 2,500 µs, + 1.
    expect(proposeFence(c, 102.5, WALL + 2.5)).toBe(ahead + 2_500 + 1);
  });

  it('ignores a read below what it already expects the registers to be by now', () => {
    const c = fresh();
    noteRegister(c, 5_000_000, 0);
    noteRegister(c, 5_000_500, 1); // the projection is 5,001,000 by now: this read is older news
    expect(c).toEqual({ fenceHigh: 5_000_000, fenceHighAt: 0 });
    noteRegister(c, 5_002_000, 1);
    expect(c).toEqual({ fenceHigh: 5_002_000, fenceHighAt: 1 });
  });

  it('uses the wall clock by default: a first proposal is within a second of Date.now() in µs', () => {
    const before = Date.now() * 1000;
    const p = proposeFence(fresh())!;
    expect(p).toBeGreaterThanOrEqual(before - 1_000_000);
    expect(p).toBeLessThanOrEqual(Date.now() * 1000 + 1_000_000);
  });

  it('makes no proposal above 2^52 (a fence must stay an exact integer); 2^52 itself is made', () => {
    const edge = fresh();
    noteRegister(edge, 2 ** 52 - 1, 0);
    expect(proposeFence(edge, 0, 0)).toBe(2 ** 52);
    const c = fresh();
    noteRegister(c, 2 ** 52, 0);
    expect(proposeFence(c, 0, WALL)).toBeNull();
    expect(proposeFence(fresh(), 0, 2 ** 52 / 1000 + 1)).toBeNull();
    expect(proposeFence(fresh(), 0, Number.NaN)).toBeNull();
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
