/** What `count` loops of one pair function made in a while: pairs, failures, and every pair's time. */
export interface LoopResult {
  pairs: number;
  failed: number;
  /** Every successful pair's time (ms). */
  times: number[];
}

/**
 * `count` loops, each calling `pair(loop)` again and again for `ms`: a pair that throws or answers
 * false is counted as failed, not timed. The HTTP workloads' load generator.
 */
export async function pairLoops(count: number, ms: number, pair: (loop: number) => Promise<boolean>): Promise<LoopResult> {
  const until = performance.now() + ms;
  const result: LoopResult = { pairs: 0, failed: 0, times: [] };
  await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      while (performance.now() < until) {
        const t0 = performance.now();
        const ok = await pair(i).catch(() => false);
        if (ok) {
          result.pairs++;
          result.times.push(performance.now() - t0);
        } else result.failed++;
      }
    }),
  );
  return result;
}
