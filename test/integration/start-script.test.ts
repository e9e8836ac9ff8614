import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { ControlClient, freePort, isPortFree } from '../../lib/cluster';
import { readEpoch, Redlock, serverRunId } from '@redlock-console/redlock';
import { findDescendant } from '../../bench/harness/process-cpu';
import { isAlive, waitFor } from '../support/cluster';

const roots: string[] = [];
afterAll(() => roots.forEach((r) => rmSync(r, { recursive: true, force: true })));

function tempDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'redlock-start-'));
  roots.push(dir);
  return dir;
}

/** Run `npm start`'s entry point with `env`; resolve when it exits or `until` matches its stdout. */
function runStart(env: Record<string, string>, until?: RegExp, dataDir = tempDataDir()) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], {
    env: { ...process.env, REDLOCK_DATA_DIR: dataDir, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const matched = new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      if (until?.test(stdout)) resolve();
    });
    void exited.then(() => reject(new Error(`exited before ${until}: ${stdout}${stderr}`)));
  });
  matched.catch(() => undefined);
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return { child, dataDir, exited, matched, out: () => stdout, err: () => stderr };
}

async function expectOneLineError(env: Record<string, string>, message: RegExp) {
  const run = runStart(env);
  expect(await run.exited).toBe(1);
  const lines = run
    .err()
    .split('\n')
    .filter((l) => l.trim() && !l.includes('npm warn'));
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^error: /);
  expect(lines[0]).toMatch(message);
  expect(run.err()).not.toMatch(/\n\s+at /); // no stack trace
}

describe('npm start: bad configuration stops with one clear line', () => {
  it('a malformed REDLOCK_NODES', async () => {
    await expectOneLineError(
      { REDLOCK_NODES: 'redis://a:1,http://b:2' },
      /REDLOCK_NODES entry 2 .* must start with redis:\/\/ or rediss:\/\//,
    );
  });

  it('a port in use', async () => {
    const port = await freePort();
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(port, '127.0.0.1', r));
    try {
      await expectOneLineError(
        { REDLOCK_PORT_BASE: String(port), REDLOCK_SERVER_PORT_BASE: String(await freePort()), REDLOCK_CLUSTER_SIZE: '1' },
        new RegExp(`port ${port} .*already in use.*REDLOCK_PORT_BASE`),
      );
    } finally {
      blocker.close();
    }
  });

  it('a connection cap that is not a count', async () => {
    await expectOneLineError({ REDLOCK_MAX_CONNECTIONS_PER_PEER: 'lots' }, /REDLOCK_MAX_CONNECTIONS_PER_PEER must be a whole number/);
  });

  it('an API-key quota that is not a count', async () => {
    await expectOneLineError(
      { REDLOCK_API_KEY_QUOTAS: 'billing:held=many' },
      /REDLOCK_API_KEY_QUOTAS: "billing:held=many": held must be a whole number/,
    );
  });

  it('a missing redis-server', async () => {
    await expectOneLineError(
      { REDIS_SERVER: '/nonexistent/redis-server' },
      /REDIS_SERVER=\/nonexistent\/redis-server is not an executable/,
    );
  });
});

/**
 * A base port whose `count` consecutive ports are free now, below the kernel's ephemeral range
 * (32768+): a base from freePort() sits inside it, and the ports after it can be taken by any
 * outgoing connection of the tests running in parallel (seen in CI: "port … already in use").
 */
async function freePortRange(count: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20_000 + Math.floor(Math.random() * 12_000);
    const free = await Promise.all(Array.from({ length: count }, (_, i) => isPortFree(base + i)));
    if (free.every(Boolean)) return base;
  }
  throw new Error(`no ${count} consecutive free ports found between 20000 and 32000`);
}

describe('npm start: the whole product, then Ctrl-C', () => {
  it('runs the cluster, the lock service and the console, prints URLs and login, and stops everything on SIGINT', async () => {
    const port = await freePort();
    const servicePort = await freePort();
    const run = runStart(
      {
        PORT: String(port),
        REDLOCK_SERVICE_PORT: String(servicePort),
        REDLOCK_CLUSTER_SIZE: '3',
        REDLOCK_PORT_BASE: String(await freePortRange(3)),
        REDLOCK_SERVER_PORT_BASE: String(await freePortRange(3)),
        REDLOCK_PERSISTENCE: 'none',
        REDLOCK_API_KEYS: 'start-test=start-test-key-0123456789abcdef',
      },
      /Ctrl-C stops everything/,
    );
    await run.matched;
    expect(run.out()).toContain(`console   http://127.0.0.1:${port}`);
    expect(run.out()).toContain(`locks     http://127.0.0.1:${servicePort}`);
    const login = /login\s+(\S+) \/ (\S+)/.exec(run.out());
    expect(login?.[1]).toBe('operator');
    const stored = JSON.parse(readFileSync(join(run.dataDir, 'operator.json'), 'utf8')) as { password: string };
    expect(login?.[2]).toBe(stored.password);
    expect(statMode(join(run.dataDir, 'operator.json'))).toBe(0o600);
    expect(statMode(join(run.dataDir, 'control.secret'))).toBe(0o600);

    expect((await fetch(`http://127.0.0.1:${port}/api/nodes`)).status).toBe(401);
    const signIn = await fetch(`http://127.0.0.1:${port}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: login![1], password: login![2] }),
    });
    expect(signIn.status).toBe(200);
    const cookie = signIn.headers.get('set-cookie')!.split(';')[0]!;
    const res = await fetch(`http://127.0.0.1:${port}/api/nodes`, { headers: { cookie } });
    const body = (await res.json()) as { mode: string; nodes: Array<{ up: boolean }> };
    expect(body.mode).toBe('sandbox');
    await waitFor(
      async () => {
        const again = (await (await fetch(`http://127.0.0.1:${port}/api/nodes`, { headers: { cookie } })).json()) as {
          nodes: Array<{ up: boolean }>;
        };
        return again.nodes.length === 3 && again.nodes.every((n) => n.up);
      },
      10_000,
      'three nodes up',
    );

    // The lock routes answer on the console's port too (forwarded to the lock service), with the
    // API's headers (next.config.ts gives /api/nodes the same).
    const key = { authorization: 'Bearer start-test-key-0123456789abcdef', 'content-type': 'application/json' };
    const granted = await fetch(`http://127.0.0.1:${port}/api/locks`, {
      method: 'POST',
      headers: key,
      body: JSON.stringify({ resource: 'start-test', ttlMs: 5_000 }),
    });
    expect(granted.status, await granted.clone().text()).toBe(200);
    const nextHeaders = res.headers;
    for (const name of [
      'content-security-policy',
      'x-frame-options',
      'x-content-type-options',
      'referrer-policy',
      'permissions-policy',
      'cross-origin-opener-policy',
      'cross-origin-resource-policy',
    ]) {
      expect(granted.headers.get(name), name).toBe(nextHeaders.get(name));
    }
    expect(granted.headers.get('cache-control')).toBe('no-store');
    const { token } = (await granted.json()) as { token: string };
    const released = await fetch(`http://127.0.0.1:${port}/api/locks/start-test/release`, {
      method: 'POST',
      headers: key,
      body: JSON.stringify({ token }),
    });
    expect(((await released.json()) as { released: boolean }).released).toBe(true);
    // The lock service on its own port: the same masters and keys, and no console route.
    const direct = await fetch(`http://127.0.0.1:${servicePort}/api/locks`, {
      method: 'POST',
      headers: key,
      body: JSON.stringify({ resource: 'start-test', ttlMs: 5_000 }),
    });
    expect(direct.status, await direct.clone().text()).toBe(200);
    expect((await fetch(`http://127.0.0.1:${servicePort}/api/nodes`, { headers: { cookie } })).status).toBe(404);
    // A lock service that dies is started again (it keeps no state of its own); the console stays up.
    const servicePid = findDescendant(run.child.pid!, 'lock-service-server');
    expect(servicePid).not.toBeNull();
    process.kill(servicePid!, 'SIGKILL');
    await waitFor(
      async () => {
        const again = findDescendant(run.child.pid!, 'lock-service-server');
        if (again === null || again === servicePid) return false;
        return (await fetch(`http://127.0.0.1:${servicePort}/api/health`).catch(() => null))?.ok === true;
      },
      30_000,
      'the lock service started again',
    );
    expect(run.out()).toMatch(/the lock service exited \(SIGKILL\); starting it again/);

    // Errors thrown by a singleton the fast path's copy of lib/ created (here the runtime's control
    // client) are mapped by the Next.js routes' copy too: a node action that does not fit is a 409.
    const { csrfToken } = (await signIn.json()) as { csrfToken: string };
    const misfit = await fetch(`http://127.0.0.1:${port}/api/nodes/1/actions`, {
      method: 'POST',
      headers: { cookie, 'x-csrf-token': csrfToken, origin: `http://127.0.0.1:${port}`, 'content-type': 'application/json' },
      body: JSON.stringify({ action: 'resume' }),
    });
    expect(misfit.status, await misfit.clone().text()).toBe(409);
    expect(((await misfit.json()) as { error: { code: string } }).error.code).toBe('BAD_STATE');

    const control = ControlClient.fromDataDir(run.dataDir);
    expect(control).not.toBeNull();
    const pids = (await control!.nodes()).map((n) => n.pid!);
    expect(pids.every(isAlive)).toBe(true);

    run.child.kill('SIGINT');
    expect(await run.exited).toBe(0);
    await waitFor(() => pids.every((p) => !isAlive(p)), 5_000, 'nodes stopped');
    await expect(fetch(`http://127.0.0.1:${port}/api/health`)).rejects.toThrow();
    await expect(fetch(`http://127.0.0.1:${servicePort}/api/health`)).rejects.toThrow();
    expect(existsSync(join(run.dataDir, 'control.json'))).toBe(false);
  }, 120_000);
});

describe('npm start after a clean Ctrl-C', () => {
  it('keeps its quorum: every node stopped gracefully has its restart adopted, and a Redlock with the console prefix and maxTtlMs acquires at once', async () => {
    const dataDir = tempDataDir();
    const serverPortBase = await freePortRange(3);
    let portBase = await freePortRange(3);
    while (Math.abs(portBase - serverPortBase) < 3) portBase = await freePortRange(3);
    const env = {
      PORT: String(await freePort()),
      REDLOCK_SERVICE_PORT: String(await freePort()),
      REDLOCK_CLUSTER_SIZE: '3',
      REDLOCK_PORT_BASE: String(portBase),
      REDLOCK_SERVER_PORT_BASE: String(serverPortBase),
      REDLOCK_PERSISTENCE: 'aof-always',
      REDLOCK_MAX_TTL_MS: '60000',
    };
    // The sandbox masters' password, generated by the first start (read once it is up).
    let password = '';
    const urls = () => [0, 1, 2].map((i) => `redis://:${password}@127.0.0.1:${portBase + i}`);
    const runIds = async () => {
      const direct = [0, 1, 2].map((i) => new Redis({ port: serverPortBase + i, host: '127.0.0.1', password, maxRetriesPerRequest: 1 }));
      try {
        return await Promise.all(direct.map(async (c) => ({ now: await serverRunId(c), epoch: await readEpoch(c, 'rl:') })));
      } finally {
        direct.forEach((c) => c.disconnect());
      }
    };
    const lockOnce = async (resource: string) => {
      const redlock = new Redlock(urls(), { keyPrefix: 'rl:', maxTtlMs: 60_000, retryCount: 0, nodeTimeoutMs: 1_000 });
      try {
        const lock = await redlock.acquire(resource, 5_000);
        await lock.release();
        return lock.votes.map((v) => v.reason);
      } finally {
        await redlock.quit();
      }
    };

    const first = runStart(env, /Ctrl-C stops everything/, dataDir);
    await first.matched;
    const secretFile = join(dataDir, 'cluster', 'redis.secret');
    expect(statMode(secretFile)).toBe(0o600);
    password = readFileSync(secretFile, 'utf8').trim();
    // The start log says where the password is, never the password.
    expect(first.out()).toContain(secretFile);
    expect(first.out()).not.toContain(password);
    await lockOnce('before-ctrl-c');
    const before = await runIds();
    first.child.kill('SIGINT');
    expect(await first.exited).toBe(0);

    const second = runStart(env, /Ctrl-C stops everything/, dataDir);
    try {
      await second.matched;
      expect(second.out()).toContain('graceful restart adopted on nodes 1, 2, 3');
      // The first attempt is granted (retryCount 0): no node sits out the 60 s restart quarantine.
      expect(await lockOnce('after-ctrl-c')).not.toContain('quarantined');
      const after = await runIds();
      for (let i = 0; i < 3; i++) {
        expect(after[i]!.now).not.toBe(before[i]!.now);
        expect(after[i]!.epoch).toMatchObject({ runId: after[i]!.now, prevRunId: before[i]!.now });
      }
    } finally {
      second.child.kill('SIGINT');
      expect(await second.exited).toBe(0);
    }
  }, 240_000);
});

function statMode(file: string): number {
  return statSync(file).mode & 0o777;
}
