import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ClusterSupervisor } from '../../lib/cluster';
import { isAlive, waitFor } from '../support/cluster';

const roots: string[] = [];
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

interface Started {
  child: ChildProcess;
  pids: number[];
  watchdog: number;
  dataRoot: string;
  stderr: () => string;
}

async function startChild(env: Record<string, string> = {}): Promise<Started> {
  const dataRoot = mkdtempSync(join(tmpdir(), 'redlock-leak-'));
  roots.push(dataRoot);
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/supervisor-child.ts', dataRoot], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const line = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      stdout += d.toString();
      const nl = stdout.indexOf('\n');
      if (nl >= 0) resolve(stdout.slice(0, nl));
    });
    child.once('exit', (code) => reject(new Error(`child exited early (${code}): ${stderr}`)));
  });
  const { pids, watchdog } = JSON.parse(line) as { pids: number[]; watchdog: number };
  expect(pids.every(isAlive)).toBe(true);
  return { child, pids, watchdog, dataRoot, stderr: () => stderr };
}

function exitOf(child: ChildProcess): Promise<{ code: number | null; signal: string | null }> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

describe('no redis-server outlives its supervisor', () => {
  it.each(['SIGINT', 'SIGTERM'] as const)('%s: graceful stop of every node, exit 0', async (sig) => {
    const { child, pids } = await startChild();
    child.kill(sig);
    expect(await exitOf(child)).toEqual({ code: 0, signal: null });
    await waitFor(() => pids.every((p) => !isAlive(p)), 5_000, 'nodes to exit');
  });

  it('an uncaught error: children are killed, exit 1 with the error printed', async () => {
    const started = await startChild({ CHILD_FAULT: 'throw' });
    expect((await exitOf(started.child)).code).toBe(1);
    expect(started.stderr()).toContain('deliberate uncaught error');
    await waitFor(() => started.pids.every((p) => !isAlive(p)), 5_000, 'nodes to exit');
  });

  it('SIGKILL of the supervisor: the lifeline watchdog kills the nodes', async () => {
    const { child, pids, watchdog } = await startChild();
    child.kill('SIGKILL');
    await exitOf(child);
    await waitFor(() => pids.every((p) => !isAlive(p)), 5_000, 'the watchdog to kill the nodes');
    await waitFor(() => !isAlive(watchdog), 5_000, 'the watchdog to exit');
  });

  it('supervisor and watchdog both killed: the next supervisor on the data root reaps the leftovers', async () => {
    const { child, pids, watchdog, dataRoot } = await startChild();
    process.kill(watchdog, 'SIGKILL');
    await waitFor(() => !isAlive(watchdog), 5_000, 'watchdog gone');
    child.kill('SIGKILL');
    await exitOf(child);
    expect(pids.every(isAlive)).toBe(true); // nothing left to kill them: orphans, for now
    const next = await ClusterSupervisor.start({ dataRoot, nodes: 2, persistence: 'none', proxies: false });
    try {
      await waitFor(() => pids.every((p) => !isAlive(p)), 5_000, 'stale nodes reaped');
      expect(next.nodes().every((n) => n.state === 'up')).toBe(true);
    } finally {
      await next.shutdown();
    }
  });
});
