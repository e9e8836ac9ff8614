import { mkdirSync, mkdtempSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from '@playwright/test';

/**
 * e2e runs the real product: `scripts/start.ts` (the `npm start` entry point) with five local
 * masters on ports of its own and a fresh data directory, driven through Debian's Chromium.
 *
 * Every worker has a console of its own (e2e/support/console.ts starts it, a worker fixture): its
 * own masters, teaching sandbox, data directory and HTTP port. So tests that change cluster-wide
 * state (crash a node, run a scenario) never race a test in another worker; a spec file's tests
 * still run in order in one worker. This file is also evaluated in each worker, where
 * TEST_PARALLEL_INDEX picks that worker's ports: E2E_PORT + index and E2E_REDIS_PORT_BASE + 10 ×
 * index (the masters' servers 1,000 above). The run's data dir is chosen once in the runner and
 * inherited through the environment; each worker process gets a fresh directory inside it.
 */
process.env.E2E_RUN_DATA_DIR ??= process.env.E2E_DATA_DIR ?? mkdtempSync(join(tmpdir(), 'redlock-e2e-'));
process.env.E2E_RUN_PORT ??= process.env.E2E_PORT ?? '3210';
// Fixed ports stay below the ephemeral range (32768+); E2E_REDIS_PORT_BASE lets two runs coexist.
process.env.E2E_RUN_REDIS_PORT_BASE ??= process.env.E2E_REDIS_PORT_BASE ?? '26381';
const SLOT = Number(process.env.TEST_PARALLEL_INDEX ?? 0);
const PORT = Number(process.env.E2E_RUN_PORT) + SLOT;
const REDIS_PORT_BASE = Number(process.env.E2E_RUN_REDIS_PORT_BASE) + 10 * SLOT;
if (process.env.TEST_WORKER_INDEX !== undefined) {
  // In a worker: what the specs and helpers read (sandbox(), home.spec.ts's ports) is this worker's console.
  process.env.E2E_PORT = String(PORT);
  process.env.E2E_REDIS_PORT_BASE = String(REDIS_PORT_BASE);
  process.env.E2E_DATA_DIR = join(process.env.E2E_RUN_DATA_DIR, `worker-${process.env.TEST_WORKER_INDEX}`);
  mkdirSync(process.env.E2E_DATA_DIR, { recursive: true });
}
/**
 * Workers, one console each: E2E_WORKERS, else one per two cores. A worker keeps about two cores
 * busy (its console, masters and Chromium): on this 2-core machine two workers were slower and
 * flakier than one (README's development section has the measurement).
 */
const WORKERS = Number(process.env.E2E_WORKERS ?? Math.max(1, Math.floor(availableParallelism() / 2)));
export const E2E_LOGIN = { username: 'e2e-operator', password: 'e2e-operator-password' };
export const E2E_VIEWER = { username: 'e2e-viewer', password: 'e2e-viewer-password' };
export const E2E_API_KEY = 'e2e-client-key-0123456789abcdef';
/** The sandbox's lease ceiling (REDLOCK_MAX_TTL_MS): short, so quarantines end within a test. */
export const E2E_MAX_TTL_MS = 5_000;
/** The worker's console: its URL and the environment `scripts/start.ts` runs with (e2e/support/console.ts). */
export const E2E_CONSOLE = {
  url: `http://127.0.0.1:${PORT}`,
  env: {
    PORT: String(PORT),
    REDLOCK_DATA_DIR: process.env.E2E_DATA_DIR ?? '',
    REDLOCK_PORT_BASE: String(REDIS_PORT_BASE),
    REDLOCK_SERVER_PORT_BASE: String(REDIS_PORT_BASE + 1_000),
    // The lock service's own port (its default, PORT + 1, is the next worker's console).
    REDLOCK_SERVICE_PORT: String(REDIS_PORT_BASE + 2_000),
    REDLOCK_PERSISTENCE: 'aof-always',
    REDLOCK_MAX_TTL_MS: String(E2E_MAX_TTL_MS),
    // The lock service waits 1 s for a master, not the 100 ms default: no spec is about that deadline
    // (test/integration/lock-service-node-timeout.test.ts is), and on a loaded machine 100 ms read
    // a stalled console as masters that did not answer (503s in three specs of one run at load 10).
    REDLOCK_NODE_TIMEOUT_MS: '1000',
    REDLOCK_ADMIN_USER: E2E_LOGIN.username,
    REDLOCK_ADMIN_PASSWORD: E2E_LOGIN.password,
    REDLOCK_VIEWER_USER: E2E_VIEWER.username,
    REDLOCK_VIEWER_PASSWORD: E2E_VIEWER.password,
    REDLOCK_API_KEYS: `e2e-client=${E2E_API_KEY}`,
  },
};

export default defineConfig({
  testDir: 'e2e',
  timeout: 60_000,
  expect: { timeout: 5_000 },
  // The build the consoles serve, made once before any worker starts (a worker never builds).
  globalSetup: './e2e/support/global-setup.ts',
  workers: WORKERS,
  fullyParallel: false,
  retries: 0,
  forbidOnly: true,
  reporter: [['list'], ['html', { open: 'never', outputFolder: process.env.E2E_REPORT_DIR ?? 'playwright-report' }]],
  outputDir: process.env.E2E_OUTPUT_DIR ?? 'test-results/playwright',
  use: {
    baseURL: E2E_CONSOLE.url,
    screenshot: 'only-on-failure',
    trace: 'retain-on-failure',
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: [
        '--no-sandbox',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
      ],
    },
  },
  projects: [{ name: 'chromium', use: { browserName: 'chromium', viewport: { width: 1440, height: 900 } } }],
});
