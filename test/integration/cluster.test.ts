import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterConfigError, ClusterSupervisor, NodeActionError, freePort } from '../../lib/cluster';
import { readEpoch } from '@redlock-console/redlock';
import { startTestCluster, waitFor, type TestCluster } from '../support/cluster';

let cluster: TestCluster;

beforeAll(async () => {
  cluster = await startTestCluster({ nodes: 3, persistence: ['none', 'aof-always', 'aof-everysec'] });
});
afterAll(async () => {
  await cluster?.stop();
});

describe('cluster supervisor on real redis-server processes', () => {
  it('starts independent masters with their own ports, pids, data dirs and persistence', async () => {
    const nodes = cluster.supervisor.nodes();
    expect(nodes.map((n) => n.state)).toEqual(['up', 'up', 'up']);
    expect(new Set(nodes.map((n) => n.pid)).size).toBe(3);
    expect(new Set(nodes.map((n) => n.dataDir)).size).toBe(3);
    expect(nodes.map((n) => n.persistence)).toEqual(['none', 'aof-always', 'aof-everysec']);
    for (const node of nodes) {
      expect(node.proxyPort).not.toBe(node.port);
      expect(node.url).toMatch(new RegExp(`^redis://:[A-Za-z0-9_-]{43}@127\\.0\\.0\\.1:${node.proxyPort}$`));
      expect(node.directUrl).toMatch(new RegExp(`^redis://:[A-Za-z0-9_-]{43}@127\\.0\\.0\\.1:${node.port}$`));
      expect(node.uptimeMs).toBeGreaterThanOrEqual(0);
      const client = cluster.client(node.id);
      await client.connect();
      const info = await client.info('persistence');
      expect(info).toContain(`aof_enabled:${node.persistence === 'none' ? 0 : 1}`);
      expect(await client.config('GET', 'appendfsync')).toEqual(['appendfsync', node.persistence === 'aof-always' ? 'always' : 'everysec']);
      expect(await client.info('replication')).toContain('role:master');
    }
  });

  it('marks brand-new data directories clean with the shared epoch sentinel', async () => {
    const client = cluster.client(1);
    await client.connect().catch(() => undefined);
    const epoch = await readEpoch(client, 'rl:');
    expect(epoch?.origin).toBe('fresh data directory');
    expect(epoch!.quarantineUntil).toBeLessThanOrEqual(Date.now() + 1_000);
  });

  it('crash: SIGKILL, clients are refused, and a `none` node comes back empty without its epoch', async () => {
    const direct = cluster.client(1);
    await direct.connect().catch(() => undefined);
    await direct.set('crash-probe', 'v');
    const status = await cluster.supervisor.crash(1);
    expect(status.state).toBe('down');
    expect(status.pid).toBeNull();
    expect(status.lastExit?.signal).toBe('SIGKILL');
    // The redis-server port itself now refuses connections.
    const { Redis } = await import('ioredis');
    const raw = new Redis({ port: status.port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    raw.on('error', () => undefined);
    await expect(raw.connect()).rejects.toThrow(/ECONNREFUSED|Connection is closed/);
    raw.disconnect();

    const after = await cluster.supervisor.restart(1);
    expect(after.state).toBe('up');
    const fresh = cluster.client(1);
    await fresh.connect();
    expect(await fresh.get('crash-probe')).toBeNull();
    expect(await readEpoch(fresh, 'rl:')).toBeNull(); // data lost: the lock core must quarantine it
  });

  it('crash + restart of an aof-always node keeps every acknowledged write', async () => {
    const client = cluster.client(2);
    await client.connect();
    const pipeline = client.pipeline();
    for (let i = 0; i < 200; i++) pipeline.set(`aof:${i}`, String(i));
    await pipeline.exec();
    await cluster.supervisor.crash(2);
    await cluster.supervisor.restart(2);
    const again = cluster.client(2);
    await again.connect();
    expect(await again.get('aof:0')).toBe('0');
    expect(await again.get('aof:199')).toBe('199');
    expect((await readEpoch(again, 'rl:'))?.origin).toBe('fresh data directory');
  });

  it('restart can switch persistence mode', async () => {
    const status = await cluster.supervisor.restart(1, { persistence: 'aof-always' });
    expect(status.persistence).toBe('aof-always');
    const client = cluster.client(1);
    await client.connect();
    expect(await client.config('GET', 'appendonly')).toEqual(['appendonly', 'yes']);
  });

  it('graceful stop then start; a delayed restart reports when it will start and then starts', async () => {
    expect((await cluster.supervisor.stop(3)).state).toBe('down');
    expect((await cluster.supervisor.start(3)).state).toBe('up');
    const started = Date.now();
    const pending = await cluster.supervisor.restart(3, { delayMs: 400 });
    expect(pending.state).toBe('down');
    expect(pending.restartAt).toBeGreaterThanOrEqual(started + 400);
    const up = await cluster.supervisor.waitUntilUp(3, 10_000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
    expect(up.restartAt).toBeNull();
  });

  it('pause (SIGSTOP) makes commands time out; resume (SIGCONT) answers again', async () => {
    const client = cluster.client(3, { commandTimeout: 300 });
    await client.connect();
    expect((await cluster.supervisor.pause(3)).state).toBe('paused');
    await expect(client.ping()).rejects.toThrow(/timed out/i);
    expect((await cluster.supervisor.resume(3)).state).toBe('up');
    await waitFor(async () => (await client.ping().catch(() => 'x')) === 'PONG', 3_000, 'PONG after resume');
  });

  it('partition and latency act on the proxy every client goes through', async () => {
    const client = cluster.client(2, { commandTimeout: 300 });
    await client.connect();
    await cluster.supervisor.partition(2);
    expect(cluster.supervisor.node(2).fault).toEqual({ kind: 'blackhole' });
    await expect(client.ping()).rejects.toThrow(/timed out/i);
    await cluster.supervisor.heal(2);
    await waitFor(async () => (await client.ping().catch(() => 'x')) === 'PONG', 3_000, 'PONG after heal');

    await cluster.supervisor.act(2, { action: 'latency', latencyMs: 120, jitterMs: 0 });
    const t0 = performance.now();
    await client.ping();
    expect(performance.now() - t0).toBeGreaterThanOrEqual(110);
    await cluster.supervisor.heal(2);
    const t1 = performance.now();
    await client.ping();
    expect(performance.now() - t1).toBeLessThan(100);
  });

  it('refuses actions that do not fit the state, and unknown nodes, with typed errors', async () => {
    await expect(cluster.supervisor.resume(1)).rejects.toMatchObject({ name: 'NodeActionError', code: 'BAD_STATE' });
    await expect(cluster.supervisor.start(1)).rejects.toBeInstanceOf(NodeActionError);
    expect(() => cluster.supervisor.node(9)).toThrow(/there is no node 9/);
    expect(cluster.supervisor.nodes().every((n) => n.state === 'up')).toBe(true);
  });
});

describe('bad configuration stops with one clear line', () => {
  it('a port in use', async () => {
    const port = await freePort();
    const blocker: Server = createServer();
    await new Promise<void>((r) => blocker.listen(port, '127.0.0.1', r));
    try {
      const err = await ClusterSupervisor.start({
        dataRoot: `${cluster.dataRoot}/blocked`,
        nodes: 1,
        portBase: port,
        proxies: false,
      }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ClusterConfigError);
      expect((err as ClusterConfigError).code).toBe('PORT_IN_USE');
      expect((err as Error).message).toMatch(new RegExp(`port ${port} .*already in use.*REDLOCK_SERVER_PORT_BASE`));
      expect((err as Error).message).not.toContain('\n');
    } finally {
      blocker.close();
    }
  });

  it('a redis-server binary that does not exist or cannot start', async () => {
    const err = await ClusterSupervisor.start({
      dataRoot: `${cluster.dataRoot}/nobin`,
      nodes: 1,
      proxies: false,
      binary: '/bin/false',
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ClusterConfigError);
    expect((err as ClusterConfigError).code).toBe('START_FAILED');
  });

  it('an impossible node count', async () => {
    await expect(ClusterSupervisor.start({ dataRoot: `${cluster.dataRoot}/x`, nodes: 0 })).rejects.toThrow(/from 1 to 15/);
  });
});
