import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from '../../lib/cluster/ports';

/**
 * Real redis-server processes started with exactly the arguments a test gives (persistence, memory
 * policy), each in a data directory of its own that survives its restarts: for tests of what a
 * restart loads (an RDB snapshot, an older AOF) that the cluster supervisor's modes do not cover.
 */
export interface RedisNode {
  readonly port: number;
  readonly url: string;
  readonly dir: string;
  /** A direct client (reconnects after a restart). */
  readonly client: Redis;
  /** SIGKILL (a crash) and wait for the exit. */
  crash(): Promise<void>;
  /** Start again on the same port and directory, with these arguments (default: the last ones). */
  start(args?: readonly string[]): Promise<void>;
  stop(): Promise<void>;
}

/** Redis's own default persistence: RDB snapshots at `save 3600 1 300 100 60 10000`, no AOF. */
export const DEFAULT_RDB = Object.freeze(['--save', '3600 1 300 100 60 10000', '--appendonly', 'no']);
export const NO_PERSISTENCE = Object.freeze(['--save', '', '--appendonly', 'no']);
export const AOF_ALWAYS = Object.freeze(['--save', '', '--appendonly', 'yes', '--appendfsync', 'always']);

async function ping(port: number, deadline: number): Promise<void> {
  for (;;) {
    const probe = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => undefined);
    try {
      await probe.connect();
      // A node loading its data answers LOADING: wait until it serves.
      if ((await probe.ping()) === 'PONG') return;
    } catch {
      if (Date.now() > deadline) throw new Error(`redis-server on ${port} did not start`);
      // poll: until the node serves
      await new Promise((res) => setTimeout(res, 20));
    } finally {
      probe.disconnect();
    }
  }
}

/** `env`: extra environment for the process (e.g. test/support/clock-shim.ts's, to move its clock). */
export async function startRedisNode(args: readonly string[], env: Readonly<Record<string, string>> = {}): Promise<RedisNode> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'redlock-node-'));
  let child: ChildProcess | null = null;
  let last = args;
  const run = async (a: readonly string[]) => {
    last = a;
    child = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--dir',
        dir,
        '--dbfilename',
        'dump.rdb',
        '--appenddirname',
        'aof',
        '--daemonize',
        'no',
        '--logfile',
        '',
        ...a,
      ],
      { stdio: 'ignore', env: { ...process.env, ...env } },
    );
    await ping(port, Date.now() + 5_000);
  };
  const exit = async (signal: NodeJS.Signals) => {
    const c = child as ChildProcess | null;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise((res) => c.once('exit', res));
    c.kill(signal);
    await exited;
  };
  await run(args);
  const client = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 1, retryStrategy: () => 50 });
  client.on('error', () => undefined);
  return {
    port,
    dir,
    client,
    url: `redis://127.0.0.1:${port}`,
    crash: () => exit('SIGKILL'),
    start: (a) => run(a ?? last),
    async stop() {
      client.disconnect();
      await exit('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function startRedisNodes(
  argsOf: (i: number) => readonly string[],
  count = 5,
  envOf: (i: number) => Readonly<Record<string, string>> = () => ({}),
): Promise<RedisNode[]> {
  return Promise.all(Array.from({ length: count }, (_, i) => startRedisNode(argsOf(i), envOf(i))));
}
