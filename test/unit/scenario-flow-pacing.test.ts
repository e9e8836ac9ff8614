import { describe, expect, it } from 'vitest';
import { READING_MS, RunFlow } from '../../lib/scenarios/flow';

/** How long a playing run's boundary between two steps takes, in ms. */
async function boundaryMs(flow: RunFlow, first = false): Promise<number> {
  const started = performance.now();
  await flow.boundary(first, () => undefined);
  return performance.now() - started;
}

describe("a scenario run's reading pause between steps", () => {
  it('lasts the configured pause divided by the speed, and none before the first step', async () => {
    const fast = await boundaryMs(new RunFlow(2, 100));
    expect(fast).toBeGreaterThanOrEqual(49);
    expect(fast).toBeLessThan(READING_MS / 2);
    const slow = await boundaryMs(new RunFlow(0.5, 200));
    expect(slow).toBeGreaterThanOrEqual(399);
    expect(slow).toBeLessThan(READING_MS * 2);
    expect(await boundaryMs(new RunFlow(1, 5_000), true)).toBeLessThan(1_000);
  });

  it('is READING_MS when not configured', async () => {
    expect(await boundaryMs(new RunFlow(2))).toBeGreaterThanOrEqual(READING_MS / 2 - 1);
  });

  it('0 runs the steps back to back, and a paused run still stops at the boundary until a step', async () => {
    const flow = new RunFlow(1, 0);
    expect(await boundaryMs(flow)).toBeLessThan(READING_MS / 4);
    flow.pause();
    let paused = 0;
    let passed = false;
    const waiting = flow.boundary(false, () => paused++).then(() => (passed = true));
    expect(paused).toBe(1);
    await Promise.resolve();
    expect(passed).toBe(false);
    flow.step();
    await waiting;
    expect(passed).toBe(true);
  });
});
