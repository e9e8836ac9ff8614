import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../lib/cluster';
import {
  ETCD_PATHS,
  leaseGrantRequest,
  leaseRevokeRequest,
  lockRequest,
  parseLeaseGrant,
  parseLock,
  parseUnlock,
  unlockRequest,
} from './etcd-gateway';
import { HttpConnection } from './http-client';
import type { Poster } from './http-clients';
import { sleep } from './util';

/**
 * etcd as a peer of the lock service: one member (Debian's etcd-server, 3.4) on 127.0.0.1, free
 * ports, a temporary data directory (on disk: etcd syncs its log as it would in use), started and
 * stopped by the bench; locks through its v3 lock API over the HTTP gateway on session leases
 * (etcd-gateway.ts), with the same HTTP clients as the lock service's rows.
 */
/** `etcd` on PATH (Debian's etcd-server), or BENCH_ETCD_BINARY (another build, or a missing one to see the skip). */
export const ETCD_BINARY = process.env.BENCH_ETCD_BINARY?.trim() || 'etcd';
/** A session lease outlives a row (the bench revokes it at the row's end); etcd's own sessions default to 60 s. */
export const SESSION_TTL_S = 60;

export interface EtcdMember {
  child: ChildProcess;
  base: URL;
  version: string;
  dataDir: string;
}

/** etcd's version line, or why there is none (not installed: the row says so, the bench goes on). */
export function etcdVersion(): { version: string } | { missing: string } {
  const probe = spawnSync(ETCD_BINARY, ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) return { missing: 'etcd is not installed (apt-get install etcd-server)' };
  const version = /etcd Version: (\S+)/.exec(probe.stdout)?.[1];
  return version ? { version } : { missing: `etcd --version said ${probe.stdout.slice(0, 80)}` };
}

export async function startEtcd(version: string): Promise<EtcdMember> {
  const [client, peer] = [await freePort(), await freePort()];
  const dataDir = mkdtempSync(join(tmpdir(), 'redlock-bench-etcd-'));
  const peerUrl = `http://127.0.0.1:${peer}`;
  const clientUrl = `http://127.0.0.1:${client}`;
  const child = spawn(
    ETCD_BINARY,
    [
      '--name=bench',
      `--data-dir=${dataDir}`,
      `--listen-client-urls=${clientUrl}`,
      `--advertise-client-urls=${clientUrl}`,
      `--listen-peer-urls=${peerUrl}`,
      `--initial-advertise-peer-urls=${peerUrl}`,
      `--initial-cluster=bench=${peerUrl}`,
      '--logger=zap',
      '--log-level=error',
    ],
    { stdio: 'ignore' },
  );
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) break;
    const healthy = await fetch(`${clientUrl}/health`).then(
      async (r) => r.ok && ((await r.json()) as { health?: string }).health === 'true',
      () => false,
    );
    if (healthy) return { child, base: new URL(clientUrl), version, dataDir };
    await sleep(200);
  }
  await stopEtcd({ child, base: new URL(clientUrl), version, dataDir });
  throw new Error(`etcd did not answer ${clientUrl}/health within 30 s (exit ${child.exitCode ?? child.signalCode ?? 'none'})`);
}

export async function stopEtcd(m: EtcdMember): Promise<void> {
  if (m.child.exitCode === null && m.child.signalCode === null) {
    const exited = once(m.child, 'exit');
    m.child.kill('SIGTERM');
    await Promise.race([exited, sleep(10_000)]);
    if (m.child.exitCode === null && m.child.signalCode === null) m.child.kill('SIGKILL');
  }
  rmSync(m.dataDir, { recursive: true, force: true });
}

/** A session: one lease, granted before the row and revoked after it, as etcd's concurrency.Session. */
export async function grantLease(poster: Poster): Promise<string> {
  const a = await poster.post(ETCD_PATHS.grant, leaseGrantRequest(SESSION_TTL_S));
  return parseLeaseGrant(a.status, a.body);
}

export async function revokeLease(poster: Poster, lease: string): Promise<void> {
  await poster.post(ETCD_PATHS.revoke, leaseRevokeRequest(lease)).catch(() => undefined);
}

/** Lock `name` on `lease` and unlock it: one pair. Throws on any answer that is not the lock's. */
export async function etcdPair(poster: Poster, name: string, lease: string): Promise<boolean> {
  const locked = await poster.post(ETCD_PATHS.lock, lockRequest(name, lease));
  const key = parseLock(locked.status, locked.body, name);
  const unlocked = await poster.post(ETCD_PATHS.unlock, unlockRequest(key));
  return parseUnlock(unlocked.status, unlocked.body);
}

/**
 * etcd's lock must be real before it is measured: two sessions on one name, the second's lock call
 * must not return while the first holds it, and must return once the first unlocks. Each on its own
 * connection (a lock call waits on its connection until granted).
 */
export async function checkEtcdExcludes(m: EtcdMember): Promise<void> {
  const [a, b] = [0, 1].map(() => new HttpConnection(m.base.hostname, Number(m.base.port), {}));
  try {
    const [leaseA, leaseB] = [await grantLease(a!), await grantLease(b!)];
    const name = `bench-exclusion-${process.pid}`;
    const first = await a!.post(ETCD_PATHS.lock, lockRequest(name, leaseA));
    const keyA = parseLock(first.status, first.body, name);
    let secondHeld = false;
    const second = b!.post(ETCD_PATHS.lock, lockRequest(name, leaseB)).then((r) => {
      secondHeld = true;
      return r;
    });
    await sleep(500);
    if (secondHeld) throw new Error('etcd: a second session got the lock while the first held it: not a lock, not measured');
    parseUnlock(...answer(await a!.post(ETCD_PATHS.unlock, unlockRequest(keyA))));
    const granted = await Promise.race([second, sleep(5_000).then(() => null)]);
    if (!granted) throw new Error('etcd: the second session was not granted the lock within 5 s of the first unlocking');
    const keyB = parseLock(granted.status, granted.body, name);
    if (keyB === keyA) throw new Error('etcd: the second session was given the first one’s key');
    parseUnlock(...answer(await b!.post(ETCD_PATHS.unlock, unlockRequest(keyB))));
    await revokeLease(a!, leaseA);
    await revokeLease(a!, leaseB);
  } finally {
    a!.close();
    b!.close();
  }
}

function answer(a: { status: number; body: Record<string, unknown> }): [number, Record<string, unknown>] {
  return [a.status, a.body];
}
