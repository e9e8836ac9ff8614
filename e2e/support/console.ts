import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test as base } from '@playwright/test';
import { E2E_CONSOLE } from '../../playwright.config';

/**
 * The worker's console under test: `scripts/start.ts` (the `npm start` entry point) with the env
 * playwright.config.ts gives this worker (its own ports, masters, teaching sandbox and data dir),
 * started before the worker's first test and stopped (SIGINT, as Ctrl-C) after its last. Its output
 * goes to `console-worker-<n>.log` in the output dir; a console that does not come up fails the
 * worker with the log's tail.
 */
const READY_MS = 180_000;
const STOP_MS = 20_000;

async function healthy(url: string, child: ChildProcess, log: string): Promise<void> {
  const deadline = Date.now() + READY_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) break;
    const ok = await fetch(`${url}/api/health`, { signal: AbortSignal.timeout(2_000) }).then(
      (res) => res.ok,
      () => false,
    );
    if (ok) return;
    // poll: until the console is healthy
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const tail = readFileSync(log, 'utf8').split('\n').slice(-40).join('\n');
  throw new Error(
    `the e2e console at ${url} did not become healthy (exit ${child.exitCode ?? child.signalCode ?? 'none'}); ${log}:\n${tail}`,
  );
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGINT');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_MS);
  await exited;
  clearTimeout(timer);
}

export const test = base.extend<object, { e2eConsole: string }>({
  e2eConsole: [
    async ({}, use, workerInfo) => {
      mkdirSync(workerInfo.project.outputDir, { recursive: true });
      const log = join(workerInfo.project.outputDir, `console-worker-${workerInfo.workerIndex}.log`);
      const out = createWriteStream(log);
      await new Promise((resolve) => out.once('open', resolve));
      const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], {
        env: { ...process.env, ...E2E_CONSOLE.env },
        stdio: ['ignore', out, out],
      });
      // A worker that exits without its teardown (killed by the runner) still asks the console to stop.
      const onExit = () => child.kill('SIGINT');
      process.once('exit', onExit);
      const stopped = async () => {
        await stop(child);
        process.off('exit', onExit);
        out.end();
      };
      await healthy(E2E_CONSOLE.url, child, log).catch(async (err: unknown) => {
        await stopped();
        throw err;
      });
      await use(E2E_CONSOLE.url);
      await stopped();
    },
    { scope: 'worker', auto: true, timeout: READY_MS + STOP_MS + 10_000, title: 'this worker’s console (scripts/start.ts)' },
  ],
});
