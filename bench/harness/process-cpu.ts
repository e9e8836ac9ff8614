import { readdirSync, readFileSync } from 'node:fs';

/** A process's CPU seconds so far (user + system) from /proc/<pid>/stat, and its parent's pid; null when it is gone. */
function statOf(pid: number): { ppid: number; seconds: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces and parentheses: the fields start after its last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(fields[1]), seconds: (Number(fields[11]) + Number(fields[12])) / 100 };
  } catch {
    return null;
  }
}

/**
 * CPU seconds used so far by process `root` and every process below it (Linux /proc; clock
 * ticks of 10 ms), or null where there is no /proc. CPU time, unlike throughput, does not count
 * the time a shared VM's neighbours took from us.
 */
export function processTreeCpuSeconds(root: number): number | null {
  let pids: number[];
  try {
    pids = readdirSync('/proc')
      .filter((d) => /^\d+$/.test(d))
      .map(Number);
  } catch {
    return null;
  }
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
