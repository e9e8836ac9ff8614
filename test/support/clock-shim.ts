import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClockOffsetFile, clockShimLibrary } from '../../chaos/harness/clock-shim';

export { clockShimLibrary } from '../../chaos/harness/clock-shim';

/**
 * A redis-server whose wall clock a test can move while it runs (chaos/harness/clock-shim.c, built
 * once per machine with the system C compiler; the chaos harness's clock nemesis uses the same
 * build). `env` goes into the process's environment; `set(ms)` moves its clock to real time + ms
 * (both directions), seen at its next clock read.
 */
export interface ShiftedClock {
  readonly env: Readonly<Record<string, string>>;
  set(offsetMs: number): void;
}

export function shiftedClock(): ShiftedClock {
  const offset = new ClockOffsetFile(join(mkdtempSync(join(tmpdir(), 'redlock-clock-')), 'offset'));
  process.once('exit', () => offset.close());
  return { env: { LD_PRELOAD: clockShimLibrary(), CLOCK_SHIM_FILE: offset.path }, set: (ms) => offset.set(ms) };
}
