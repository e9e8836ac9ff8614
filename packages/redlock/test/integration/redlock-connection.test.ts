import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { InvalidArgumentError, Lock, QuorumUnavailableError, Redlock, type NodeErrorEvent } from '@redlock-console/redlock';
import { freePort } from '@/lib/cluster/ports';
import { FaultProxy } from '@/lib/faults';
import { NodeConnection } from '../../src/connection';
import { parseNodeUrl } from '../../src/node-url';
import { uniquePrefix, waitFor } from '@/test/support/cluster';
import { NO_PERSISTENCE, startRedisNode, type RedisNode } from '@/test/support/redis-nodes';

// The lock core's own connections (src/connection.ts) for nodes given as URLs: what a URL
// may carry (password, ACL user, database, TLS) reaches the server, a wrong password is an error
// the caller sees (not a hang), anything the URL cannot express is refused up front, and a
// connection the server drops comes back by itself.

const PASSWORD = 'pa ss:w@rd/1';
let node: RedisNode;
let tlsNode: RedisNode;
let tlsPort = 0;
let certDir = '';

beforeAll(async () => {
  node = await startRedisNode(NO_PERSISTENCE);
  // The direct client stays signed in as the default user; new connections need the password.
  await node.client.config('SET', 'requirepass', PASSWORD);
  await node.client.call('ACL', 'SETUSER', 'locker', 'on', '>locker-pw', '~*', '&*', '+@all');
  certDir = mkdtempSync(join(tmpdir(), 'redlock-tls-'));
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      join(certDir, 'key.pem'),
      '-out',
      join(certDir, 'cert.pem'),
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
  tlsPort = await freePort();
  tlsNode = await startRedisNode([
    ...NO_PERSISTENCE,
    '--tls-port',
    String(tlsPort),
    '--tls-cert-file',
    join(certDir, 'cert.pem'),
    '--tls-key-file',
    join(certDir, 'key.pem'),
    '--tls-ca-cert-file',
    join(certDir, 'cert.pem'),
    '--tls-auth-clients',
    'no',
  ]);
});

afterAll(async () => {
  await node?.stop();
  await tlsNode?.stop();
  if (certDir) rmSync(certDir, { recursive: true, force: true });
});

const auth = (user: string, password: string) => `${encodeURIComponent(user)}:${encodeURIComponent(password)}`;

describe("the lock core's own connections (nodes given as URLs)", () => {
  it('a password and a database in the URL: the lock key is written in that database of the authenticated server', async () => {
    // A node timeout of 1 s: the first grant's AUTH, SELECT and check on a loaded machine is not a timeout vote.
    const r = new Redlock([`redis://${auth('', PASSWORD)}@127.0.0.1:${node.port}/3`], {
      keyPrefix: uniquePrefix('conn'),
      retryCount: 0,
      nodeTimeoutMs: 1_000,
    });
    try {
      await r.markNodesClean();
      const lock = await r.acquire('res', 5_000);
      const db3 = new Redis({ port: node.port, password: PASSWORD, db: 3 });
      try {
        expect(await db3.get(r.lockKey('res'))).toMatch(new RegExp(`^${lock.token}( |$)`));
        expect(await node.client.get(r.lockKey('res'))).toBeNull();
      } finally {
        db3.disconnect();
      }
      expect(await lock.release()).toMatchObject({ deleted: 1, complete: true });
    } finally {
      await r.quit();
    }
  });

  it('an ACL user and password: granted as that user', async () => {
    const r = new Redlock([`redis://${auth('locker', 'locker-pw')}@127.0.0.1:${node.port}`], {
      keyPrefix: uniquePrefix('conn'),
      retryCount: 0,
    });
    try {
      await r.markNodesClean();
      const lock = await r.acquire('res', 5_000);
      expect(lock).toBeInstanceOf(Lock);
      expect(await lock.release()).toMatchObject({ deleted: 1, complete: true });
    } finally {
      await r.quit();
    }
  });

  it('a wrong password: node-error events name the failed authentication, and an acquire fails at once instead of waiting', async () => {
    const r = new Redlock([`redis://${auth('', 'wrong')}@127.0.0.1:${node.port}`], { keyPrefix: uniquePrefix('conn'), retryCount: 0 });
    const errors: NodeErrorEvent[] = [];
    r.on('node-error', (e) => errors.push(e));
    try {
      const started = performance.now();
      const outcome = await r.acquire('res', 5_000).catch((e: unknown) => e);
      expect(outcome).toBeInstanceOf(QuorumUnavailableError);
      expect(performance.now() - started).toBeLessThan(1_000);
      await waitFor(() => errors.some((e) => /authentication/i.test(e.error.message) && /WRONGPASS|invalid/i.test(e.error.message)));
      expect(errors[0]!.label).toBe(`127.0.0.1:${node.port}`);
      expect(JSON.stringify(errors.map((e) => e.label))).not.toContain('wrong');
    } finally {
      await r.quit();
    }
  });

  for (const url of [
    'redis://127.0.0.1:6379?family=6',
    'redis://127.0.0.1:6379/abc',
    'redis://127.0.0.1:6379/16',
    'redis://127.0.0.1:6379#x',
    'http://127.0.0.1:6379',
  ]) {
    it(`refuses ${url} before connecting (InvalidArgumentError naming the URL's shape)`, () => {
      expect(() => new Redlock([url])).toThrow(InvalidArgumentError);
    });
  }

  it('a connection the server kills comes back by itself, and the node is checked again before it votes', async () => {
    const r = new Redlock([`redis://${auth('', PASSWORD)}@127.0.0.1:${node.port}`], { keyPrefix: uniquePrefix('conn'), retryCount: 0 });
    try {
      await r.markNodesClean();
      await (await r.acquire('before', 5_000)).release();
      const killed = Number(await node.client.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes'));
      expect(killed).toBeGreaterThan(0);
      // Granted again once reconnected (the first attempts may meet the closed connection).
      await waitFor(
        async () =>
          (await r.acquire('after', 5_000).then(
            (l) => l.release(),
            () => null,
          )) !== null,
        5_000,
      );
    } finally {
      await r.quit();
    }
  });

  it("a reply no command waits for is a 'push' (a subscriber's messages), never the answer of a command", async () => {
    const conn = new NodeConnection(parseNodeUrl(`redis://${auth('', PASSWORD)}@127.0.0.1:${node.port}`));
    conn.on('error', () => undefined);
    const pushed: unknown[] = [];
    conn.on('push', (reply) => pushed.push(reply));
    const channel = `${uniquePrefix('push')}chan`;
    try {
      await waitFor(() => conn.status === 'ready');
      // Commands and their replies pair in order: nothing is pushed.
      expect(await Promise.all([conn.call('PING'), conn.call('ECHO', 'a'), conn.call('ECHO', 'b')])).toEqual(['PONG', 'a', 'b']);
      expect(pushed).toEqual([]);
      // One SUBSCRIBE, two channels: the first confirmation answers it, the second is pushed.
      expect(await conn.call('SUBSCRIBE', channel, `${channel}-2`)).toEqual(['subscribe', channel, 1]);
      await waitFor(() => pushed.length === 1);
      expect(pushed).toEqual([['subscribe', `${channel}-2`, 2]]);
      await node.client.publish(channel, 'one');
      await node.client.publish(`${channel}-2`, 'two');
      await waitFor(() => pushed.length === 3);
      expect(pushed.slice(1)).toEqual([
        ['message', channel, 'one'],
        ['message', `${channel}-2`, 'two'],
      ]);
    } finally {
      conn.disconnect();
    }
  });

  it('commands in flight when the socket dies all fail, and none runs on the next connection (nothing is re-sent)', async () => {
    // Through a fault proxy: blackholed, the commands leave our socket but never reach Redis; the
    // proxy then resets the connection. A connection layer that re-sent unanswered commands on
    // reconnection would run the INCRs there (a failed attempt's SET could run after its cleanup).
    const proxy = new FaultProxy({ targetPort: node.port });
    const port = await proxy.start();
    const conn = new NodeConnection(parseNodeUrl(`redis://${auth('', PASSWORD)}@127.0.0.1:${port}`));
    const readies: number[] = [];
    conn.on('ready', () => readies.push(Date.now()));
    conn.on('error', () => undefined);
    const key = `${uniquePrefix('conn')}inflight`;
    try {
      await waitFor(() => conn.status === 'ready');
      expect(await conn.call('PING')).toBe('PONG');
      proxy.setMode({ kind: 'blackhole' });
      const inFlight = Array.from({ length: 20 }, () =>
        conn.call('INCR', key).then(
          () => 'answered',
          (e: Error) => e.message,
        ),
      );
      // pace: the 20 INCRs are sent before the reset
      await new Promise((r) => setTimeout(r, 50));
      proxy.setMode({ kind: 'reset' });
      expect(new Set(await Promise.all(inFlight))).toEqual(new Set(['Connection closed']));
      proxy.setMode({ kind: 'pass' });
      await waitFor(() => readies.length >= 2 && conn.status === 'ready', 5_000);
      expect(await conn.call('GET', key)).toBeNull();
      expect(await node.client.get(key)).toBeNull();
      // While not ready, a command fails at once (no offline queue).
      proxy.setMode({ kind: 'reset' });
      await waitFor(() => conn.status !== 'ready');
      await expect(conn.call('INCR', key)).rejects.toThrow(/not ready/);
    } finally {
      conn.disconnect();
      await proxy.close();
    }
    expect(conn.status).toBe('end');
    await expect(conn.call('PING')).rejects.toThrow(/not ready \(end\)/);
  });

  it('the handshake names the step that failed (AUTH, SELECT), and such a connection never becomes ready', async () => {
    await node.client.call('ACL', 'SETUSER', 'noselect', 'on', '>ns-pw', '~*', '&*', '+@all', '-select');
    const cases = [
      [`redis://${auth('', 'nope')}@127.0.0.1:${node.port}/3`, /^authentication failed: WRONGPASS/],
      [`redis://${auth('noselect', 'ns-pw')}@127.0.0.1:${node.port}/3`, /^SELECT 3 failed: NOPERM/],
    ] as const;
    for (const [url, message] of cases) {
      const conn = new NodeConnection(parseNodeUrl(url));
      const errors: string[] = [];
      let ready = false;
      conn.on('error', (e: Error) => errors.push(e.message));
      conn.on('ready', () => (ready = true));
      try {
        await waitFor(() => errors.length >= 2); // the first attempt and a retry after backoff
        expect(errors[0]).toMatch(message);
        expect(ready).toBe(false);
      } finally {
        conn.disconnect();
      }
    }
  });

  it('rediss:// connects with TLS and verifies the server against the trusted CAs (NODE_EXTRA_CA_CERTS); an untrusted certificate is an error', () => {
    const script = `
      import { Redlock } from '@redlock-console/redlock';
      const r = new Redlock(['rediss://localhost:${tlsPort}'], { keyPrefix: 'tls-test:', retryCount: 0, nodeTimeoutMs: 1_000 });
      const errors = [];
      r.on('node-error', (e) => errors.push(e.error.message));
      try {
        await r.markNodesClean();
        const lock = await r.acquire('res', 5000);
        const released = await lock.release();
        console.log(JSON.stringify({ fence: String(lock.fence), deleted: released.deleted }));
      } catch (e) {
        console.log(JSON.stringify({ failed: e.name, errors }));
      } finally {
        await r.quit();
      }`;
    const run = (env: NodeJS.ProcessEnv) => {
      const out = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
        cwd: process.cwd(),
        encoding: 'utf8',
        env,
        timeout: 20_000,
      });
      return JSON.parse(out.stdout.trim().split('\n').pop() ?? '{}') as {
        fence?: string;
        deleted?: number;
        failed?: string;
        errors?: string[];
      };
    };
    const trusted = run({ ...process.env, NODE_EXTRA_CA_CERTS: join(certDir, 'cert.pem') });
    expect(trusted).toMatchObject({ deleted: 1 });
    expect(Number(trusted.fence)).toBeGreaterThan(0);
    const untrusted = run({ ...process.env, NODE_EXTRA_CA_CERTS: '' });
    expect(untrusted.failed).toBeDefined();
    expect(untrusted.errors!.join(' ')).toMatch(/self[- ]signed|certificate/i);
  });
});
