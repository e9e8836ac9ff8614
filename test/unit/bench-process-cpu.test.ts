import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { cpuMicrosPerPair, findDescendant, parseProcStat, processCpuSeconds } from '../../bench/harness/process-cpu';

describe('the bench’s server CPU per pair', () => {
  it('reads utime + stime in clock ticks after the last ")" of a command name with spaces and parentheses', () => {
    // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime …
    const stat = '4242 (node (a) b) S 17 4242 4242 0 -1 4194560 9001 0 3 0 1234 56 7 8 20 0 11 0';
    expect(parseProcStat(stat)).toEqual({ ppid: 17, seconds: 12.9 });
    expect(parseProcStat(stat, 1000)).toEqual({ ppid: 17, seconds: 1.29 });
    expect(() => parseProcStat('garbage')).toThrow(/not a \/proc/);
  });

  it('divides the CPU used over a row by the pairs made in it, in µs, and is NaN rather than a division by zero', () => {
    expect(cpuMicrosPerPair(10.5, 11.25, 1_500)).toBe(500);
    expect(cpuMicrosPerPair(0, 0.01, 20)).toBeCloseTo(500, 9);
    expect(cpuMicrosPerPair(1, 2, 0)).toBeNaN();
    expect(cpuMicrosPerPair(null, 2, 10)).toBeNaN();
    expect(cpuMicrosPerPair(1, null, 10)).toBeNaN();
    // A reading that goes back (another process under a reused pid) is no figure.
    expect(cpuMicrosPerPair(2, 1, 10)).toBeNaN();
  });

  it('finds a child process by its command line and reads its CPU time from /proc', async () => {
    const marker = `bench-cpu-marker-${process.pid}`;
    const child = spawn(
      process.execPath,
      ['-e', 'let x = 0; const t = Date.now(); while (Date.now() - t < 300) x++; setInterval(() => {}, 1e6)', marker],
      {
        stdio: 'ignore',
      },
    );
    try {
      await once(child, 'spawn');
      let found: number | null = null;
      for (const deadline = Date.now() + 10_000; found === null && Date.now() < deadline;) {
        found = findDescendant(process.pid, marker);
        // poll: until the child is found
        if (found === null) await new Promise((r) => setTimeout(r, 20));
      }
      expect(found).toBe(child.pid);
      expect(findDescendant(process.pid, `${marker}-nobody`)).toBeNull();
      // It spins for 300 ms: its CPU seconds become positive.
      let seconds = 0;
      for (const deadline = Date.now() + 10_000; seconds <= 0 && Date.now() < deadline;) {
        seconds = processCpuSeconds(child.pid!) ?? 0;
        // poll: until its CPU seconds are positive
        if (seconds <= 0) await new Promise((r) => setTimeout(r, 50));
      }
      expect(seconds).toBeGreaterThan(0);
    } finally {
      child.kill('SIGKILL');
    }
    await once(child, 'exit');
    expect(processCpuSeconds(child.pid!)).toBeNull();
  });
});
