import { describe, expect, it } from 'vitest';
import { earlyPageDue, type Snapshot, type SnapshotRun } from '@/lib/inspect';

/**
 * When a progressive first page stops waiting for its snapshot. The run here is a hand-driven
 * SnapshotRun (no Redis: what is tested is only when the waiting ends); the real runs are
 * exercised through the Locks API in test/integration/api-locks.test.ts and e2e/locks-scan.spec.ts.
 */
function handRun() {
  let settle!: (snap: Snapshot) => void;
  const done = new Promise<Snapshot>((resolve) => (settle = resolve));
  let result: Snapshot | null = null;
  const t0 = performance.now();
  const state = { scanning: false, found: 0 };
  const run: SnapshotRun = {
    readAt: Date.now(),
    pattern: 'rl:lock:*',
    done,
    finished: () => result,
    elapsedMs: () => performance.now() - t0,
    scanning: () => state.scanning,
    keysPerNode: () => [],
    found: () => state.found,
    firstKeys: () => ({ keys: [], accepted: 0 }),
  };
  const end = () => {
    result = {} as Snapshot;
    settle(result);
  };
  return { run, state, end, elapsed: () => performance.now() - t0 };
}
const timings = { stepMs: 10, catchUpMs: 400, emptyMs: 800 };
const later = (ms: number, fn: () => void) => setTimeout(fn, ms);

describe('earlyPageDue', () => {
  it('a run that ends while it is waited for gives a complete page', async () => {
    const { run, state, end } = handRun();
    state.scanning = true;
    later(5, end);
    expect(await earlyPageDue(run, timings)).toBe(false);
  });

  it('a scan of a node in full that has found locks: an early page after one step', async () => {
    const { run, state, elapsed } = handRun();
    state.scanning = true;
    state.found = 3;
    expect(await earlyPageDue(run, timings)).toBe(true);
    expect(elapsed()).toBeLessThan(timings.catchUpMs);
  });

  it('a scan that has found nothing yet is waited for until it finds a lock, or until emptyMs', async () => {
    const first = handRun();
    first.state.scanning = true;
    later(40, () => (first.state.found = 1));
    expect(await earlyPageDue(first.run, timings)).toBe(true);
    expect(first.elapsed()).toBeGreaterThanOrEqual(40);
    expect(first.elapsed()).toBeLessThan(timings.emptyMs);

    const empty = handRun();
    empty.state.scanning = true;
    expect(await earlyPageDue(empty.run, timings)).toBe(true);
    expect(empty.elapsed()).toBeGreaterThanOrEqual(timings.emptyMs);
  });

  it('a catch-up (no node scanned in full) is waited for up to catchUpMs, then held up: early page', async () => {
    const quick = handRun();
    quick.state.found = 5;
    later(30, quick.end);
    expect(await earlyPageDue(quick.run, timings)).toBe(false);

    const stuck = handRun();
    stuck.state.found = 5;
    expect(await earlyPageDue(stuck.run, timings)).toBe(true);
    expect(stuck.elapsed()).toBeGreaterThanOrEqual(timings.catchUpMs);
  });

  it('a catch-up that turns into a scan of a node in full gets its early page then', async () => {
    const { run, state, elapsed } = handRun();
    state.found = 2;
    later(25, () => (state.scanning = true));
    expect(await earlyPageDue(run, timings)).toBe(true);
    expect(elapsed()).toBeGreaterThanOrEqual(25);
    expect(elapsed()).toBeLessThan(timings.catchUpMs);
  });
});
