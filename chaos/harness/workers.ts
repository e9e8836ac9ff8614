import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Lifeline } from '../../lib/cluster/lifeline';
import type { Ns } from './history';
import type { ClientToRunner, LoopConfig, RegisterToRunner, RpcOp, RunnerToClient, RunnerToRegister } from './worker-protocol';

/** Spawn `node --import tsx <script>` with an IPC channel; stderr kept (the tail) for error messages. */
function spawnWorker(root: string, script: string, args: string[]): { proc: ChildProcess; stderr: () => string } {
  const proc = spawn(process.execPath, ['--import', 'tsx', join(root, script), ...args], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  let tail = '';
  proc.stderr?.setEncoding('utf8');
  proc.stderr?.on('data', (d: string) => (tail = (tail + d).slice(-4_000)));
  proc.on('error', () => undefined);
  return { proc, stderr: () => tail };
}

function exited(proc: ChildProcess): boolean {
  return proc.exitCode !== null || proc.signalCode !== null;
}

function signal(proc: ChildProcess, sig: NodeJS.Signals): void {
  if (exited(proc)) return;
  try {
    proc.kill(sig);
  } catch {
    // gone
  }
}

/** Is `pid` stopped (state T in /proc/<pid>/stat)? */
function isStopped(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat[stat.lastIndexOf(')') + 2] === 'T';
  } catch {
    return false;
  }
}

/** One chaos client process as the runner sees it. */
export class ClientWorker {
  progress = { ok: 0, failed: 0 };
  /** Locks this process holds now (when its loop reports holds). */
  readonly holds = new Map<string, { resource: string; until: Ns }>();
  paused = false;
  /** performance.now() when the latest hold began. */
  lastHoldAt = 0;
  /** Unhandled rejections the process reported since its loop began. */
  unhandled: string[] = [];
  private loopDone: { resolve: (v: { ok: number; failed: number; events: number }) => void; reject: (e: Error) => void } | null = null;
  private readonly rpcs = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private nextRpc = 1;
  private resumeTimer: NodeJS.Timeout | null = null;
  private readyResolve: (() => void) | null = null;
  readonly ready: Promise<void>;

  constructor(
    readonly index: number,
    readonly proc: ChildProcess,
    private readonly stderr: () => string,
  ) {
    this.ready = new Promise((resolve) => (this.readyResolve = resolve));
    proc.on('message', (msg: ClientToRunner) => this.onMessage(msg));
    proc.on('exit', (code, sig) =>
      this.failAll(new Error(`client ${index} exited (${code ?? sig}):\n${this.stderr().trim().split('\n').slice(-40).join('\n')}`)),
    );
  }

  get pid(): number {
    return this.proc.pid ?? -1;
  }

  send(msg: RunnerToClient): void {
    if (this.proc.connected) this.proc.send(msg);
  }

  /** Run lock loops; resolves with the loop's counters when it has stopped and flushed its log. */
  loop(config: LoopConfig): Promise<{ ok: number; failed: number; events: number }> {
    this.progress = { ok: 0, failed: 0 };
    this.holds.clear();
    this.unhandled = [];
    return new Promise((resolve, reject) => {
      this.loopDone = { resolve, reject };
      this.send({ type: 'loop', config });
    });
  }

  stop(): void {
    this.send({ type: 'stop' });
  }

  rpc(op: RpcOp): Promise<unknown> {
    const id = this.nextRpc++;
    return new Promise((resolve, reject) => {
      this.rpcs.set(id, { resolve, reject });
      this.send({ type: 'rpc', id, ...op });
    });
  }

  /** SIGSTOP the process now; resume() or the timer sends SIGCONT. */
  pause(ms?: number): void {
    signal(this.proc, 'SIGSTOP');
    this.paused = true;
    if (ms !== undefined) this.resumeAfter(ms);
  }

  resume(): void {
    if (this.resumeTimer) clearTimeout(this.resumeTimer);
    this.resumeTimer = null;
    signal(this.proc, 'SIGCONT');
    this.paused = false;
  }

  armSelfStop(ms: number): void {
    this.send({ type: 'arm-self-stop', ms });
  }

  private resumeAfter(ms: number): void {
    if (this.resumeTimer) clearTimeout(this.resumeTimer);
    this.resumeTimer = setTimeout(() => this.resume(), ms);
  }

  private onMessage(msg: ClientToRunner): void {
    switch (msg.type) {
      case 'ready':
        this.readyResolve?.();
        return;
      case 'progress':
        this.progress = { ok: msg.ok, failed: msg.failed };
        return;
      case 'hold':
        if (!this.holds.has(msg.lock)) this.lastHoldAt = performance.now();
        this.holds.set(msg.lock, { resource: msg.resource, until: msg.until });
        return;
      case 'unhold':
        this.holds.delete(msg.lock);
        return;
      case 'self-stop': {
        // The process stops itself right after sending this: wait until it has, then time the pause.
        this.paused = true;
        const deadline = Date.now() + 1_000;
        const poll = () => (isStopped(this.pid) || Date.now() > deadline ? this.resumeAfter(msg.ms) : setTimeout(poll, 1));
        poll();
        return;
      }
      case 'loop-done':
        this.progress = { ok: msg.ok, failed: msg.failed };
        this.loopDone?.resolve(msg);
        this.loopDone = null;
        return;
      case 'rpc-result': {
        const waiter = this.rpcs.get(msg.id);
        this.rpcs.delete(msg.id);
        if (msg.ok) waiter?.resolve(msg.value);
        else waiter?.reject(Object.assign(new Error(msg.message), { name: msg.error }));
        return;
      }
      case 'fatal':
        this.failAll(new Error(`client ${this.index}: ${msg.message}`));
        return;
      case 'unhandled':
        this.unhandled.push(msg.message);
        return;
    }
  }

  private failAll(err: Error): void {
    this.loopDone?.reject(err);
    this.loopDone = null;
    for (const waiter of this.rpcs.values()) waiter.reject(err);
    this.rpcs.clear();
  }
}

/** The register process as the runner sees it. */
export class RegisterWorker {
  private dumpWaiter: { resolve: (count: number) => void; reject: (err: Error) => void } | null = null;

  constructor(
    readonly proc: ChildProcess,
    readonly port: number,
  ) {
    proc.on('message', (msg: RegisterToRunner) => {
      if (msg.type === 'dumped') {
        this.dumpWaiter?.resolve(msg.count);
        this.dumpWaiter = null;
      }
    });
    proc.on('exit', (code, sig) => {
      this.dumpWaiter?.reject(new Error(`the register process exited (${code ?? sig})`));
      this.dumpWaiter = null;
    });
  }

  reset(): void {
    this.send({ type: 'reset' });
  }

  /** Write the records to `path` (JSONL); resolves with their number. */
  dump(path: string): Promise<number> {
    if (exited(this.proc)) return Promise.reject(new Error('the register process has exited'));
    return new Promise((resolve, reject) => {
      this.dumpWaiter = { resolve, reject };
      this.send({ type: 'dump', path });
    });
  }

  private send(msg: RunnerToRegister): void {
    if (this.proc.connected) this.proc.send(msg);
  }
}

/**
 * The worker processes of a run: K clients and the register. None outlives the runner: a process
 * 'exit' hook SIGCONTs and SIGKILLs them, the workers exit when their IPC channel closes, and the
 * cluster's lifeline watchdog SIGKILLs them if the runner itself is killed outright.
 */
export class ChaosWorkers {
  private readonly lifeline = new Lifeline();
  private readonly exitHook = () => this.killAllSync();
  private constructor(
    readonly clients: ClientWorker[],
    readonly register: RegisterWorker,
    private readonly procs: ChildProcess[],
  ) {
    process.once('exit', this.exitHook);
    for (const p of procs) if (p.pid) this.lifeline.watch(p.pid);
  }

  /** `preload`: the lock core every client imports at start (its compile time is then not a phase's). */
  static async start(root: string, clientCount: number, origin: bigint, preload: string): Promise<ChaosWorkers> {
    const procs: ChildProcess[] = [];
    try {
      const reg = spawnWorker(root, 'chaos/workers/register.ts', [origin.toString()]);
      procs.push(reg.proc);
      const port = await new Promise<number>((resolve, reject) => {
        reg.proc.once('message', (msg: RegisterToRunner) =>
          msg.type === 'ready' ? resolve(msg.port) : reject(new Error('register: unexpected message')),
        );
        reg.proc.once('exit', (code) => reject(new Error(`the register process exited (${code}): ${reg.stderr()}`)));
      });
      const clients: ClientWorker[] = [];
      for (let i = 0; i < clientCount; i++) {
        const w = spawnWorker(root, 'chaos/workers/client.ts', [String(i), origin.toString(), preload]);
        procs.push(w.proc);
        clients.push(new ClientWorker(i, w.proc, w.stderr));
      }
      await Promise.all(
        clients.map((c) =>
          Promise.race([
            c.ready,
            new Promise((_, reject) => {
              c.proc.once('exit', (code) => reject(new Error(`client ${c.index} exited at start (${code})`)));
            }),
          ]),
        ),
      );
      return new ChaosWorkers(clients, new RegisterWorker(reg.proc, port), procs);
    } catch (err) {
      for (const p of procs) signal(p, 'SIGKILL');
      throw err;
    }
  }

  /** SIGCONT every client that may be stopped. */
  resumeAll(): void {
    for (const c of this.clients) c.resume();
  }

  killAllSync(): void {
    for (const p of this.procs) {
      signal(p, 'SIGCONT');
      signal(p, 'SIGKILL');
    }
  }

  /** Close every worker (their IPC channels first, so they exit on their own), then make sure. */
  async close(): Promise<void> {
    this.resumeAll();
    for (const p of this.procs) if (p.connected) p.disconnect();
    await Promise.all(
      this.procs.map((p) =>
        exited(p)
          ? undefined
          : new Promise<void>((resolve) => {
              const timer = setTimeout(() => {
                signal(p, 'SIGKILL');
                resolve();
              }, 3_000);
              p.once('exit', () => {
                clearTimeout(timer);
                resolve();
              });
            }),
      ),
    );
    this.lifeline.close();
    process.removeListener('exit', this.exitHook);
  }
}
