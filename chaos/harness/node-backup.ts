/**
 * A node's data going back in time without a restart, the way an operator or a tool does
 * it to a running redis-server: a backup of the node (SAVE, its dump.rdb copied aside), then later
 * - restored in place: a side redis-server started from the backup, the node made its replica
 *   (REPLICAOF) until the sync is done, then REPLICAOF NO ONE;
 * - reloaded: the backup copied over the node's dbfilename, then DEBUG RELOAD NOSAVE (the node must
 *   run with enable-debug-command: the run's cluster does, run-env.ts);
 * - swapped: SWAPDB of the node's database 0 with another one that holds the same key prefix's
 *   older state.
 * The process, its run_id and its pid stay the same: only the data goes back.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { findRedisServer, freePort } from '../../lib/cluster';
import { pingOnce } from '../../lib/cluster/node-process';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The database the SWAPDB trials keep the older state in (the chaos clients use 0 only). */
export const SWAP_DB = 7;

/**
 * SAVE on the node and its dump.rdb copied into a new directory under `scratch` (returned). The
 * node's own dump.rdb is removed unless it persists in `rdb`: a node without persistence must not
 * find an old snapshot in its data directory at its next restart.
 */
export async function backupNode(client: Redis, dataDir: string, keepDump: boolean, scratch: string): Promise<string> {
  await client.save();
  const dir = mkdtempSync(join(scratch, 'backup-'));
  copyFileSync(join(dataDir, 'dump.rdb'), join(dir, 'dump.rdb'));
  if (!keepDump) rmSync(join(dataDir, 'dump.rdb'), { force: true });
  return dir;
}

/** A redis-server started from a backup directory's dump.rdb, without persistence of its own. */
export class SideServer {
  private constructor(
    readonly port: number,
    private readonly child: ChildProcess,
    private readonly onExit: () => void,
  ) {}

  static async start(backupDir: string): Promise<SideServer> {
    const binary = findRedisServer();
    if (!binary) throw new Error('redis-server not found');
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      const child = spawn(
        binary,
        [
          '--port',
          String(port),
          '--bind',
          '127.0.0.1',
          '--dir',
          backupDir,
          '--dbfilename',
          'dump.rdb',
          '--save',
          '',
          '--appendonly',
          'no',
          // A disk-based sync at once (a diskless one waits repl-diskless-sync-delay, 5 s, for more replicas).
          '--repl-diskless-sync',
          'no',
          '--daemonize',
          'no',
          '--logfile',
          '',
        ],
        { stdio: 'ignore' },
      );
      child.on('error', () => undefined);
      const onExit = () => void child.kill('SIGKILL');
      process.once('exit', onExit);
      const deadline = performance.now() + 10_000;
      while (child.exitCode === null && child.signalCode === null && performance.now() < deadline) {
        if (await pingOnce('127.0.0.1', port, 500)) return new SideServer(port, child, onExit);
        await sleep(10);
      }
      child.kill('SIGKILL');
      process.removeListener('exit', onExit);
      // Its port taken between the probe and the bind: another one.
      if (attempt >= 3) throw new Error(`the side redis-server from ${backupDir} did not start`);
    }
  }

  async stop(): Promise<void> {
    process.removeListener('exit', this.onExit);
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGKILL');
    await exited;
  }
}

/**
 * Restore the node in place from `side`: REPLICAOF it, wait for the sync (master_link_status:up),
 * REPLICAOF NO ONE (also when the sync did not finish in time, which then throws).
 */
export async function restoreInPlace(client: Redis, side: SideServer, timeoutMs = 10_000): Promise<void> {
  await client.call('REPLICAOF', '127.0.0.1', String(side.port));
  try {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const info = await client.info('replication').catch(() => '');
      if (/^master_link_status:up\r?$/m.test(info)) break;
      if (performance.now() > deadline)
        throw new Error(`the node did not sync from the side server on port ${side.port} in ${timeoutMs} ms`);
      await sleep(10);
    }
  } finally {
    await client.call('REPLICAOF', 'NO', 'ONE');
  }
}

/** Copy the backup over the node's dump.rdb and DEBUG RELOAD NOSAVE it; then remove it unless the node persists in rdb. */
export async function reloadBackup(client: Redis, dataDir: string, backupDir: string, keepDump: boolean): Promise<void> {
  copyFileSync(join(backupDir, 'dump.rdb'), join(dataDir, 'dump.rdb'));
  try {
    await client.call('DEBUG', 'RELOAD', 'NOSAVE');
  } finally {
    if (!keepDump) rmSync(join(dataDir, 'dump.rdb'), { force: true });
  }
}
