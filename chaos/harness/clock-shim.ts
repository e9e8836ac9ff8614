/**
 * The clock shim (chaos/harness/clock-shim.c): an LD_PRELOAD library that moves a redis-server's wall
 * clock at run time, by the offset in a small file. Built once per machine with the system C
 * compiler (`cc`); the chaos harness's clock nemesis (node-clocks.ts) and the tests
 * (test/support/clock-shim.ts) share this one build and this one source.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const SOURCE = join(import.meta.dirname, 'clock-shim.c');

/** The shared library, compiled when missing or older than its source. */
export function clockShimLibrary(): string {
  const dir = join(tmpdir(), 'redlock-clock-shim');
  mkdirSync(dir, { recursive: true });
  const lib = join(dir, 'clock-shim.so');
  if (!existsSync(lib) || statSync(lib).mtimeMs < statSync(SOURCE).mtimeMs) {
    const tmp = `${lib}.${process.pid}`;
    try {
      execFileSync('cc', ['-O2', '-shared', '-fPIC', '-o', tmp, SOURCE], { stdio: ['ignore', 'ignore', 'pipe'] });
    } catch (err) {
      throw new Error(`the clock shim needs a C compiler (cc) to build ${SOURCE}: ${(err as Error).message}`);
    }
    execFileSync('mv', ['-f', tmp, lib]);
  }
  return lib;
}

/**
 * An offset file for CLOCK_SHIM_FILE: 8 bytes (signed milliseconds, little-endian), written in
 * place and never truncated (the shimmed process maps them). Starts at 0.
 */
export class ClockOffsetFile {
  private fd: number | null;
  constructor(readonly path: string) {
    this.fd = openSync(path, 'w+');
    this.set(0);
  }

  /** The process's wall clock is real time + `offsetMs` from its next clock read on. */
  set(offsetMs: number): void {
    if (this.fd === null) throw new Error(`clock offset file ${this.path} is closed`);
    const b = Buffer.alloc(8);
    b.writeBigInt64LE(BigInt(Math.round(offsetMs)));
    writeSync(this.fd, b, 0, 8, 0);
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }
}
