/**
 * The masters' wall clocks, for the clock nemesis (targeted-loss.ts). The run's cluster starts its
 * redis-server processes through a wrapper (`<dir>/redis-server`, a shell script that `exec`s the
 * real binary, so the process, its pid and its command line are redis-server's own); the wrapper
 * preloads the clock shim (clock-shim.c) into a node whose port has an offset file here, and
 * starts every other node as it is. A node gets its shim at its next start (`shim`, then a
 * restart), so no master pays for the shim's system calls outside the phases and trials that move
 * clocks.
 */
import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ClockOffsetFile, clockShimLibrary } from './clock-shim';

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

export class NodeClocks {
  /** The wrapper to give the cluster as its redis-server binary. */
  readonly binary: string;
  private readonly offsets = new Map<number, ClockOffsetFile>();
  private library: string | null = null;

  constructor(
    private readonly dir: string,
    realBinary: string,
  ) {
    mkdirSync(dir, { recursive: true });
    this.binary = join(dir, 'redis-server');
    // The preload is named in a file next to the offsets, so the library is built only when a
    // clock is first shimmed (it needs a C compiler), not for every run.
    writeFileSync(
      this.binary,
      [
        '#!/bin/sh',
        '# The chaos harness starts its masters through this (chaos/harness/node-clocks.ts): a port with an',
        '# offset file gets the clock shim preloaded.',
        'port=',
        'prev=',
        'for a in "$@"; do',
        '  if [ "$prev" = "--port" ]; then port=$a; fi',
        '  prev=$a',
        'done',
        `dir=${quote(dir)}`,
        'if [ -n "$port" ] && [ -f "$dir/$port.offset" ] && [ -f "$dir/preload" ]; then',
        '  LD_PRELOAD=$(cat "$dir/preload") CLOCK_SHIM_FILE="$dir/$port.offset"',
        '  export LD_PRELOAD CLOCK_SHIM_FILE',
        'fi',
        `exec ${quote(realBinary)} "$@"`,
        '',
      ].join('\n'),
    );
    chmodSync(this.binary, 0o755);
  }

  /** Does the node on `port` get the shim at its next start? */
  shimmed(port: number): boolean {
    return this.offsets.has(port);
  }

  /** The node on `port` starts with the shim from its next start on (offset 0 until `set`). */
  shim(port: number): void {
    if (this.offsets.has(port)) return;
    if (this.library === null) {
      this.library = clockShimLibrary();
      writeFileSync(join(this.dir, 'preload'), this.library);
    }
    this.offsets.set(port, new ClockOffsetFile(join(this.dir, `${port}.offset`)));
  }

  /** Its next start is without the shim (a running shimmed process keeps its offset: set it to 0 first). */
  unshim(port: number): void {
    const file = this.offsets.get(port);
    if (!file) return;
    file.set(0);
    file.close();
    rmSync(file.path, { force: true });
    this.offsets.delete(port);
  }

  /** Move the wall clock of the (shimmed, running) node on `port` to real time + `offsetMs`. */
  set(port: number, offsetMs: number): void {
    const file = this.offsets.get(port);
    if (!file) throw new Error(`the node on port ${port} does not run with the clock shim`);
    file.set(offsetMs);
  }

  /** Every clock back to real time (the runner's cleanup). */
  resetAll(): void {
    for (const file of this.offsets.values()) file.set(0);
  }

  close(): void {
    for (const port of [...this.offsets.keys()]) this.unshim(port);
  }
}
