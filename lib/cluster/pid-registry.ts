import { readFileSync, writeFileSync } from 'node:fs';

/**
 * `<dataRoot>/pids.json`: the redis-server processes this data root's supervisor started. If a
 * supervisor was killed so hard that even its watchdog died (e.g. the machine's OOM killer took
 * both), the next supervisor on the same data root reaps the leftovers before it binds the ports.
 */
export class PidRegistry {
  private readonly pids = new Map<number, { pid: number; port: number }>();

  constructor(private readonly file: string) {}

  set(nodeId: number, pid: number, port: number): void {
    this.pids.set(nodeId, { pid, port });
    this.flush();
  }

  delete(nodeId: number, pid: number): void {
    if (this.pids.get(nodeId)?.pid === pid) {
      this.pids.delete(nodeId);
      this.flush();
    }
  }

  /** Kill redis-server processes recorded by a previous supervisor that are still alive. */
  reapStale(): number[] {
    let recorded: Array<{ pid: number; port: number }> = [];
    try {
      recorded = Object.values(JSON.parse(readFileSync(this.file, 'utf8')) as Record<string, { pid: number; port: number }>);
    } catch {
      return [];
    }
    const reaped: number[] = [];
    for (const { pid, port } of recorded) {
      if (!isOurRedis(pid, port)) continue;
      try {
        process.kill(pid, 'SIGKILL');
        reaped.push(pid);
      } catch {
        // gone meanwhile
      }
    }
    this.flush();
    return reaped;
  }

  private flush(): void {
    try {
      writeFileSync(this.file, JSON.stringify(Object.fromEntries(this.pids)), { mode: 0o600 });
    } catch {
      // the data root may be gone during teardown; the registry is best effort by design
    }
  }
}

/** Only a live redis-server serving that port counts: never kill an unrelated process that reused the pid. */
function isOurRedis(pid: number, port: number): boolean {
  try {
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return cmdline.includes('redis-server') && cmdline.includes(String(port));
  } catch {
    return false;
  }
}
