import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCluster, type TestCluster } from '../support/cluster';

// The sandbox's redis-server processes had no password, so any local user could
// delete locks, audit entries and revocations through a node's port or its fault proxy. Every
// node now requires a generated password, kept in a 0600 file, given to redis-server in a 0600
// config file (never on its command line), and used by every client the supervisor hands out.

let cluster: TestCluster;

beforeAll(async () => {
  cluster = await startTestCluster({ nodes: 2 });
});
afterAll(async () => {
  await cluster?.stop();
});

/** A client as a local user without the password would open it. */
async function anonymous(port: number): Promise<Redis> {
  const client = new Redis({
    port,
    lazyConnect: true,
    // Its ready check (INFO) would be refused too: connect as a plain socket would.
    enableReadyCheck: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
  });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

describe('the sandbox masters require a password', () => {
  it('refuses a client without the password on the node port and on its fault proxy (NOAUTH), before any command', async () => {
    for (const node of cluster.supervisor.nodes()) {
      for (const port of [node.port, node.proxyPort!]) {
        const client = await anonymous(port);
        await expect(client.set('intruder', 'x')).rejects.toThrow(/NOAUTH/);
        await expect(client.del('rl:lock:anything')).rejects.toThrow(/NOAUTH/);
        await expect(client.call('FLUSHALL')).rejects.toThrow(/NOAUTH/);
        client.disconnect();
      }
    }
  });

  it('refuses a wrong password', async () => {
    const node = cluster.supervisor.nodes()[0]!;
    const client = await anonymous(node.port);
    await expect(client.call('AUTH', 'guess')).rejects.toThrow(/WRONGPASS|invalid password/);
    client.disconnect();
  });

  it('the URLs the supervisor hands out carry the password and work, through the proxy and direct', async () => {
    for (const url of [...cluster.supervisor.urls(), ...cluster.supervisor.directUrls()]) {
      const client = new Redis(url, { maxRetriesPerRequest: 0, lazyConnect: true });
      await client.connect();
      expect(await client.ping()).toBe('PONG');
      client.disconnect();
    }
  });

  it('keeps the password in a 0600 file of the data root, and never on a redis-server command line', async () => {
    const file = join(cluster.dataRoot, 'redis.secret');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const password = readFileSync(file, 'utf8').trim();
    expect(password).toMatch(/^[A-Za-z0-9_-]{43}$/);
    for (const node of cluster.supervisor.nodes()) {
      const cmdline = readFileSync(`/proc/${node.pid}/cmdline`, 'utf8');
      expect(cmdline).not.toContain(password);
      expect(statSync(join(node.dataDir, 'auth.conf')).mode & 0o777).toBe(0o600);
    }
  });

  it('a restarted node requires the same password', async () => {
    await cluster.supervisor.crash(2);
    const status = await cluster.supervisor.start(2);
    expect(status.state).toBe('up');
    const client = await anonymous(status.port);
    await expect(client.get('x')).rejects.toThrow(/NOAUTH/);
    client.disconnect();
    const ok = new Redis(status.directUrl, { maxRetriesPerRequest: 0 });
    expect(await ok.ping()).toBe('PONG');
    ok.disconnect();
  });
});
