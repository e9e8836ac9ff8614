import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat's utime and stime (USER_HZ: 100 on Linux). */
export const TICKS_PER_SECOND = 100;

/**
 * The parent pid and CPU seconds (user + system) in the text of a /proc/<pid>/stat file. The
 * command name (field 2) may hold spaces and parentheses: the fields are counted after its last ')'.
 */
export function parseProcStat(stat: string, ticksPerSecond = TICKS_PER_SECOND): { ppid: number; seconds: number } {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime) || !Number.isFinite(Number(fields[1])))
    throw new Error(`not a /proc/<pid>/stat line: ${stat.slice(0, 80)}`);
  return { ppid: Number(fields[1]), seconds: (utime + stime) / ticksPerSecond };
}

/** A process's CPU seconds so far (user + system) from /proc/<pid>/stat, and its parent's pid; null when it is gone. */
function statOf(pid: number): { ppid: number; seconds: number } | null {
  try {
    return parseProcStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return null;
  }
}

/** CPU seconds used so far by one process (not its children), or null when it is gone or there is no /proc. */
export function processCpuSeconds(pid: number): number | null {
  return statOf(pid)?.seconds ?? null;
}

/**
 * Server CPU µs per pair over a row: the difference of two CPU readings (seconds) divided by the
 * pairs made in between; NaN when a reading is missing or no pair was made (never a division by 0).
 */
export function cpuMicrosPerPair(before: number | null, after: number | null, pairs: number): number {
  if (before === null || after === null || !(pairs > 0) || after < before) return Number.NaN;
  return ((after - before) * 1e6) / pairs;
}

function allPids(): number[] | null {
  try {
    return readdirSync('/proc')
      .filter((d) => /^\d+$/.test(d))
      .map(Number);
  } catch {
    return null;
  }
}

/**
 * The first process below `root` (children first, then theirs) whose command line contains
 * `needle`, or null: the console's HTTP server is a child of the supervisor the bench starts.
 */
export function findDescendant(root: number, needle: string): number | null {
  const pids = allPids();
  if (!pids) return null;
  const children = new Map<number, number[]>();
  for (const pid of pids) {
    const s = statOf(pid);
    if (s) children.set(s.ppid, [...(children.get(s.ppid) ?? []), pid]);
  }
  const queue = [...(children.get(root) ?? [])];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    let cmdline = '';
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
    } catch {
      continue;
    }
    if (cmdline.includes(needle)) return pid;
    queue.push(...(children.get(pid) ?? []));
  }
  return null;
}

/**
 * CPU seconds used so far by process `root` and every process below it (Linux /proc; clock
 * ticks of 10 ms), or null where there is no /proc. CPU time, unlike throughput, does not count
 * the time a shared VM's neighbours took from us.
 */
export function processTreeCpuSeconds(root: number): number | null {
  const pids = allPids();
  if (!pids) return null;
  const stats = new Map<number, { ppid: number; seconds: number }>();
  for (const pid of pids) {
    const s = statOf(pid);
    if (s) stats.set(pid, s);
  }
  if (!stats.has(root)) return null;
  const children = new Map<number, number[]>();
  for (const [pid, s] of stats) children.set(s.ppid, [...(children.get(s.ppid) ?? []), pid]);
  let total = 0;
  const stack = [root];
  while (stack.length > 0) {
    const pid = stack.pop()!;
    total += stats.get(pid)?.seconds ?? 0;
    stack.push(...(children.get(pid) ?? []));
  }
  return total;
}
