import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { chmodSync, closeSync, openSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { encodeCommand } from '@redlock-console/redlock/internals';
import { ClusterConfigError, NodeActionError } from './errors';
import { persistenceArgs, type Persistence } from './persistence';

export type NodeState = 'starting' | 'up' | 'paused' | 'stopping' | 'down';

export interface NodeExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  at: number;
  expected: boolean;
}

export interface RedisNodeOptions {
  id: number;
  port: number;
  host: string;
  dataDir: string;
  binary: string;
  /** Extra redis-server arguments (appended last, so they win). */
  extraArgs?: readonly string[];
  /**
   * The password clients must AUTH with (`requirepass`), or null for none. It goes to
   * redis-server in a 0600 config file in the node's data directory, never on its command line
   * (which any local user can read with `ps`).
   */
  password?: string | null;
  readyTimeoutMs?: number;
  stopTimeoutMs?: number;
}

/**
 * One redis-server process: spawn, wait until it answers PING, stop gracefully, crash, pause.
 * The process runs in its own process group (detached) so a terminal's Ctrl-C reaches only the
 * supervisor, which then stops nodes in order; its output goes straight to `<dataDir>/redis.log`
 * (a file descriptor, not a pipe), so a node never depends on this process reading its output.
 *
 * Events: 'spawn' (pid), 'exit' (pid, NodeExit), 'unexpected-exit' (NodeExit).
 */
export class RedisNode extends EventEmitter {
  readonly id: number;
  readonly port: number;
  readonly host: string;
  readonly dataDir: string;
  private child: ChildProcess | null = null;
  private _state: NodeState = 'down';
  private _persistence: Persistence = 'none';
  private _startedAt: number | null = null;
  private _lastExit: NodeExit | null = null;
  private expectingExit = false;
  private exited: Promise<void> = Promise.resolve();

  constructor(private readonly options: RedisNodeOptions) {
    super();
    this.id = options.id;
    this.port = options.port;
    this.host = options.host;
    this.dataDir = options.dataDir;
  }

  get state(): NodeState {
    return this._state;
  }
  get pid(): number | null {
    return this.child?.pid ?? null;
  }
  get persistence(): Persistence {
    return this._persistence;
  }
  get startedAt(): number | null {
    return this._startedAt;
  }
  get lastExit(): NodeExit | null {
    return this._lastExit;
  }
  get logFile(): string {
    return join(this.dataDir, 'redis.log');
  }

  /** Spawn redis-server with `persistence` and resolve once it answers PING. */
  async start(persistence: Persistence): Promise<void> {
    if (this._state !== 'down') throw new NodeActionError(`node ${this.id} is ${this._state}, not down`, 'BAD_STATE');
    this._state = 'starting';
    this._persistence = persistence;
    const logOffset = fileSize(this.logFile);
    const logFd = openSync(this.logFile, 'a', 0o600);
    const password = this.options.password ?? null;
    const args = [
      // A config file must be redis-server's first argument.
      ...(password !== null ? [writeAuthConfig(this.dataDir, password)] : []),
      '--port',
      String(this.port),
      '--bind',
      this.host,
      '--dir',
      this.dataDir,
      '--daemonize',
      'no',
      '--protected-mode',
      'yes',
      '--logfile',
      '',
      '--pidfile',
      '',
      '--dbfilename',
      'dump.rdb',
      '--appenddirname',
      'aof',
      ...persistenceArgs(persistence),
      ...(this.options.extraArgs ?? []),
    ];
    let child: ChildProcess;
    try {
      child = spawn(this.options.binary, args, { detached: true, stdio: ['ignore', logFd, logFd] });
    } finally {
      closeSync(logFd);
    }
    this.child = child;
    this.expectingExit = false;
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        const exit: NodeExit = { code, signal, at: Date.now(), expected: this.expectingExit };
        this._lastExit = exit;
        if (this.child === child) {
          this.child = null;
          this._state = 'down';
          this._startedAt = null;
        }
        this.emit('exit', child.pid, exit);
        if (!exit.expected) this.emit('unexpected-exit', exit);
        resolve();
      });
    });
    child.once('error', (err) => {
      // spawn failures (ENOENT, EACCES) arrive here instead of 'exit'.
      this.emit('spawn-error', err);
    });
    if (child.pid) this.emit('spawn', child.pid);

    try {
      await waitUntilReady(this.host, this.port, password, this.options.readyTimeoutMs ?? 15_000, () => this.child !== child);
    } catch (err) {
      const tail = readLogTail(this.logFile, logOffset);
      await this.kill('SIGKILL').catch(() => undefined);
      if (/Address already in use/i.test(tail)) {
        throw new ClusterConfigError(
          `port ${this.port} is already in use (another redis-server or redlock-console?); stop it or choose other ports with REDLOCK_SERVER_PORT_BASE`,
          'PORT_IN_USE',
        );
      }
      const reason = lastMeaningfulLine(tail) ?? (err as Error).message;
      throw new ClusterConfigError(`redis-server for node ${this.id} on port ${this.port} did not start: ${reason}`, 'START_FAILED');
    }
    this._state = 'up';
    this._startedAt = Date.now();
  }

  /**
   * Graceful stop, resolving with the process's exit (null when none was running). `shutdown`, when
   * given, asks the server itself to stop (e.g. SHUTDOWN SAVE) and rejects when it refused; without
   * it, or when it fails, SIGTERM (Redis flushes its AOF and saves when it has save points). SIGKILL
   * if the process has not exited in time.
   */
  async stop(shutdown?: () => Promise<unknown>): Promise<NodeExit | null> {
    const child = this.child;
    if (!child) return null;
    this._state = 'stopping';
    this.expectingExit = true;
    signal(child, 'SIGCONT'); // a paused process can handle neither SIGTERM nor SHUTDOWN
    const timeout = this.options.stopTimeoutMs ?? 5_000;
    const deadline = sleep(timeout).then(() => true);
    const asked = shutdown
      ? await Promise.race([
          shutdown().then(
            () => true,
            () => false,
          ),
          this.exited.then(() => true),
          deadline.then(() => false),
        ])
      : false;
    if (!asked) signal(child, 'SIGTERM');
    const timedOut = await Promise.race([this.exited.then(() => false), deadline]);
    if (timedOut) await this.kill('SIGKILL');
    return this._lastExit;
  }

  /** Crash: SIGKILL, no chance to flush anything. Resolves when the process is gone. */
  async crash(): Promise<void> {
    if (!this.child) throw new NodeActionError(`node ${this.id} is not running`, 'BAD_STATE');
    await this.kill('SIGKILL');
  }

  pause(): void {
    if (this._state !== 'up' || !this.child) throw new NodeActionError(`node ${this.id} is ${this._state}, not up`, 'BAD_STATE');
    signal(this.child, 'SIGSTOP');
    this._state = 'paused';
  }

  resume(): void {
    if (this._state !== 'paused' || !this.child) throw new NodeActionError(`node ${this.id} is ${this._state}, not paused`, 'BAD_STATE');
    signal(this.child, 'SIGCONT');
    this._state = 'up';
  }

  /** Synchronous last resort for process 'exit' handlers: no waiting is possible there. */
  killSync(): void {
    if (this.child) {
      this.expectingExit = true;
      signal(this.child, 'SIGKILL');
    }
  }

  private async kill(sig: NodeJS.Signals): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.expectingExit = true;
    signal(child, sig);
    await this.exited;
  }
}

function signal(child: ChildProcess, sig: NodeJS.Signals): void {
  try {
    child.kill(sig);
  } catch {
    // already gone
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

function fileSize(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

function readLogTail(file: string, from: number): string {
  try {
    return readFileSync(file).subarray(from).toString('utf8');
  } catch {
    return '';
  }
}

function lastMeaningfulLine(log: string): string | null {
  const lines = log
    .split('\n')
    .map((l) => l.replace(/^\d+:[A-Z] [^*#-]*[*#-] /, '').trim())
    .filter(Boolean);
  return lines.find((l) => /error|fatal|can't|cannot|failed|bad|wrong/i.test(l)) ?? lines.at(-1) ?? null;
}

/**
 * `<dataDir>/auth.conf` (0600) holding `requirepass`: redis-server reads it at start, and the
 * password never appears on its command line. Returns the file's path.
 */
function writeAuthConfig(dataDir: string, password: string): string {
  if (!/^[A-Za-z0-9_-]+$/.test(password)) throw new ClusterConfigError('the sandbox password must be base64url characters', 'BAD_CONFIG');
  const file = join(dataDir, 'auth.conf');
  writeFileSync(file, `requirepass ${password}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return file;
}

/**
 * One PING over a raw socket (after AUTH when the node has a password): true on +PONG, false on
 * -LOADING, a refused AUTH or any failure.
 */
export function pingOnce(host: string, port: number, timeoutMs: number, password: string | null = null): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    let buffer = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    const replies = password !== null ? 2 : 1;
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () =>
      socket.write(
        password !== null ? Buffer.concat([encodeCommand(['AUTH', password]), encodeCommand(['PING'])]) : encodeCommand(['PING']),
      ),
    );
    socket.on('data', (chunk) => {
      buffer += chunk.toString('latin1');
      const lines = buffer.split('\r\n');
      if (lines.length <= replies) return;
      done(lines[replies - 1] === '+PONG' && (replies === 1 || lines[0] === '+OK'));
    });
  });
}

async function waitUntilReady(host: string, port: number, password: string | null, timeoutMs: number, gone: () => boolean): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let delay = 5;
  while (Date.now() < deadline) {
    if (gone()) throw new Error('redis-server exited during start');
    if (await pingOnce(host, port, 500, password)) return;
    await sleep(delay);
    delay = Math.min(delay * 2, 100);
  }
  throw new Error(`no PONG within ${timeoutMs} ms`);
}
