import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { freePort } from '../../lib/cluster/ports';
import { encodeCommand } from '../../chaos/harness/resp';

/**
 * A real twemproxy (the `nutcracker` binary, Debian/Ubuntu package `nutcracker`) in front of one
 * redis-server, for tests of the lock core behind a Redis proxy. One pool, `redis: true`, default
 * hash and distribution, one server, `auto_eject_hosts: false`, in a temporary directory of its own.
 *
 * What nutcracker 0.5.0 does with the commands it does not support (measured): it closes the client's socket without any reply (its log says `parsed unsupported
 * command 'SCRIPT'`), and the replies of the commands written before it in the same write may be
 * lost with it. It answers PING itself (also while its upstream is down), serves key commands and
 * EVAL/EVALSHA with at least one key (routed by the first key), and keeps a client's socket open
 * across a restart of the upstream (`-ERR Connection refused` meanwhile).
 */
export interface Twemproxy {
  /** The port the proxy listens on (127.0.0.1). */
  readonly port: number;
  /** redis://127.0.0.1:<port>: the node URL to give the lock core. */
  readonly url: string;
  /** The upstream redis-server's port. */
  readonly upstreamPort: number;
  /** Its stats port (JSON on connect). */
  readonly statsPort: number;
  /** Its log so far (each unsupported command is logged: `parsed unsupported command 'SCRIPT'`). */
  log(): string;
  /** SIGKILL, wait for the exit, remove its directory; idempotent. */
  stop(): Promise<void>;
}

const INSTALL_HINT = 'install it (Debian/Ubuntu: `apt-get install -y nutcracker`)';

/** The nutcracker binary: on PATH, or in the sbin directories Debian installs it to (often not on a user's PATH). */
export function nutcrackerBinary(): string {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/usr/local/sbin', '/sbin'];
  for (const dir of dirs) {
    if (!dir) continue;
    const candidate = join(dir, 'nutcracker');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  throw new Error(`twemproxy is not installed: no \`nutcracker\` binary on PATH or in /usr/sbin; ${INSTALL_HINT}`);
}

/**
 * The YAML of one pool in front of one redis-server. `server_connections` stays 1 (the default):
 * with more, nutcracker spreads one client's pipelined commands over several upstream connections
 * and a GET written after a SET may run before it (measured), which breaks the per-connection order
 * the lock core relies on (a probe after its SET, a release after its SET). hash and distribution
 * are nutcracker's defaults.
 */
function config(port: number, upstreamPort: number): string {
  return [
    'lockcore:',
    `  listen: 127.0.0.1:${port}`,
    '  redis: true',
    '  hash: fnv1a_64',
    '  distribution: ketama',
    '  server_connections: 1',
    '  timeout: 2000',
    '  server_retry_timeout: 200',
    '  server_failure_limit: 1',
    '  auto_eject_hosts: false',
    '  preconnect: false',
    '  servers:',
    `    - 127.0.0.1:${upstreamPort}:1 upstream`,
    '',
  ].join('\n');
}

/**
 * One RESP command on a fresh connection; resolves with the raw reply, or null when the socket
 * closed, failed or stayed silent (bounded by `timeoutMs`).
 */
function ask(port: number, args: readonly string[], timeoutMs: number): Promise<string | null> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let reply = '';
    const done = (value: string | null) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(value);
    };
    const timer = setTimeout(() => done(null), timeoutMs);
    socket.on('connect', () => socket.write(encodeCommand(args.map((a) => Buffer.from(a)))));
    socket.on('data', (chunk) => {
      reply += chunk.toString('latin1');
      if (reply.endsWith('\r\n')) done(reply);
    });
    socket.on('error', () => done(null));
    socket.on('close', () => done(reply === '' ? null : reply));
  });
}

/**
 * Start nutcracker in front of 127.0.0.1:<upstreamPort>; resolves once a key command through it is
 * served by the upstream (PING alone proves nothing: nutcracker answers it itself). Throws with
 * the install hint when the binary is missing, and with its log when it does not come up within
 * `timeoutMs`.
 */
export async function startTwemproxy(upstreamPort: number, timeoutMs = 5_000): Promise<Twemproxy> {
  const binary = nutcrackerBinary();
  const deadline = Date.now() + timeoutMs;
  let lastFailure = '';
  // A port from freePort may be taken again before nutcracker binds it: try again with new ones.
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const statsPort = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'redlock-twemproxy-'));
    const conf = join(dir, 'nutcracker.yml');
    const logFile = join(dir, 'nutcracker.log');
    writeFileSync(conf, config(port, upstreamPort));
    const test = spawnSync(binary, ['-t', '-c', conf], { encoding: 'utf8', timeout: 5_000 });
    if (test.status !== 0) {
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`nutcracker -t refused its configuration: ${test.stderr || test.stdout}`);
    }
    const child: ChildProcess = spawn(
      binary,
      ['-c', conf, '-s', String(statsPort), '-a', '127.0.0.1', '-o', logFile, '-p', join(dir, 'nutcracker.pid')],
      { stdio: 'ignore' },
    );
    let exited = false;
    const exit = new Promise<void>((resolve) =>
      child.once('exit', () => {
        exited = true;
        resolve();
      }),
    );
    child.once('error', () => undefined);
    const log = () => {
      try {
        return readFileSync(logFile, 'utf8');
      } catch {
        return '';
      }
    };
    const stop = async () => {
      if (!exited) {
        child.kill('SIGKILL');
        await exit;
      }
      rmSync(dir, { recursive: true, force: true });
    };
    // Served by the upstream: a bulk reply ($), not nutcracker's own -ERR (upstream not up yet).
    for (;;) {
      if (exited) break;
      const reply = await ask(port, ['GET', 'twemproxy:ready'], 500);
      if (reply !== null && reply.startsWith('$')) {
        return { port, url: `redis://127.0.0.1:${port}`, upstreamPort, statsPort, log, stop };
      }
      if (Date.now() > deadline) {
        const text = log();
        await stop();
        throw new Error(`nutcracker on ${port} did not serve within ${timeoutMs} ms (last reply ${JSON.stringify(reply)}); log:\n${text}`);
      }
      // poll: until nutcracker serves
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    lastFailure = log();
    await stop();
  }
  throw new Error(`nutcracker exited at start three times (ports taken?); last log:\n${lastFailure}`);
}
