import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A redis-server whose wall clock a test can move while it runs (test/support/clock-shim.c, built
 * once per machine with the system C compiler). `env` goes into the process's environment;
 * `set(ms)` moves its clock to real time + ms (both directions), seen at its next clock read.
 */
export interface ShiftedClock {
  readonly env: Readonly<Record<string, string>>;
  set(offsetMs: number): void;
}

const SOURCE = join(import.meta.dirname, 'clock-shim.c');

/** The shared library, compiled when missing or older than its source. */
export function clockShimLibrary(): string {
  const dir = join(tmpdir(), 'redlock-clock-shim');
  mkdirSync(dir, { recursive: true });
  const lib = join(dir, 'clock-shim.so');
  if (!existsSync(lib) || statSync(lib).mtimeMs < statSync(SOURCE).mtimeMs) {
    const tmp = `${lib}.${process.pid}`;
    execFileSync('cc', ['-O2', '-shared', '-fPIC', '-o', tmp, SOURCE]);
    execFileSync('mv', ['-f', tmp, lib]);
  }
  return lib;
}

export function shiftedClock(): ShiftedClock {
  const file = join(mkdtempSync(join(tmpdir(), 'redlock-clock-')), 'offset');
  const fd = openSync(file, 'w+');
  const write = (ms: number) => {
    const b = Buffer.alloc(8);
    b.writeBigInt64LE(BigInt(Math.round(ms)));
    // In place, never truncated: the process maps these 8 bytes.
    writeSync(fd, b, 0, 8, 0);
  };
  write(0);
  process.once('exit', () => closeSync(fd));
  return { env: { LD_PRELOAD: clockShimLibrary(), CLOCK_SHIM_FILE: file }, set: write };
}
