import { spawn, type ChildProcess } from 'node:child_process';

/**
 * A tiny watchdog process that SIGKILLs the redis-server processes it was told about as soon as
 * its stdin closes, which happens when the supervisor dies in any way, SIGKILL included. Signal
 * handlers cover SIGINT/SIGTERM/uncaught errors; this covers what no handler can.
 *
 * Protocol on stdin: "+<pid>\n" to watch, "-<pid>\n" to forget.
 */
const WATCHDOG_SOURCE = `
const pids = new Set();
let buf = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => {
  buf += d;
  let i;
  while ((i = buf.indexOf('\\n')) >= 0) {
    const line = buf.slice(0, i); buf = buf.slice(i + 1);
    const pid = Number(line.slice(1));
    if (!Number.isInteger(pid) || pid <= 0) continue;
    if (line[0] === '+') pids.add(pid); else pids.delete(pid);
  }
});
const end = () => { for (const pid of pids) { try { process.kill(pid, 'SIGKILL'); } catch {} } process.exit(0); };
process.stdin.on('end', end);
process.stdin.on('error', end);
process.on('SIGTERM', () => {});
process.on('SIGINT', () => {});
`;

export class Lifeline {
  private child: ChildProcess | null;

  constructor() {
    this.child = spawn(process.execPath, ['-e', WATCHDOG_SOURCE], {
      detached: true,
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    this.child.on('error', () => undefined);
    this.child.stdin?.on('error', () => undefined);
    // The watchdog must never keep the supervisor alive by itself.
    this.child.unref();
    (this.child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  }

  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  watch(pid: number): void {
    this.child?.stdin?.write(`+${pid}\n`);
  }
  forget(pid: number): void {
    this.child?.stdin?.write(`-${pid}\n`);
  }

  /** Normal shutdown: the nodes are already stopped; let the watchdog go. */
  close(): void {
    this.child?.stdin?.end();
    this.child = null;
  }
}
