import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from '@playwright/test';

/**
 * e2e runs the real product: `scripts/start.ts` (the `npm start` entry point) with five local
 * masters on ports of its own and a fresh data directory, driven through Debian's Chromium.
 * The data dir is chosen once in the runner and inherited by the workers through the environment.
 */
process.env.E2E_DATA_DIR ??= mkdtempSync(join(tmpdir(), 'redlock-e2e-'));
const PORT = Number(process.env.E2E_PORT ?? 3210);
// Fixed ports stay below the ephemeral range (32768+); E2E_REDIS_PORT_BASE lets two runs coexist.
const REDIS_PORT_BASE = Number(process.env.E2E_REDIS_PORT_BASE ?? 26381);
export const E2E_LOGIN = { username: 'e2e-operator', password: 'e2e-operator-password' };
export const E2E_VIEWER = { username: 'e2e-viewer', password: 'e2e-viewer-password' };
export const E2E_API_KEY = 'e2e-client-key-0123456789abcdef';
/** The sandbox's lease ceiling (REDLOCK_MAX_TTL_MS): short, so quarantines end within a test. */
export const E2E_MAX_TTL_MS = 5_000;

export default defineConfig({
  testDir: 'e2e',
  timeout: 60_000,
  expect: { timeout: 5_000 },
  workers: 1,
  fullyParallel: false,
  retries: 0,
  forbidOnly: true,
  reporter: [['list'], ['html', { open: 'never', outputFolder: process.env.E2E_REPORT_DIR ?? 'playwright-report' }]],
  outputDir: process.env.E2E_OUTPUT_DIR ?? 'test-results/playwright',
  use: {
    baseURL: `http://127.0.0.1:${PORT}`,
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
  webServer: {
    command: 'node --import tsx scripts/start.ts',
    url: `http://127.0.0.1:${PORT}/api/health`,
    reuseExistingServer: false,
    timeout: 180_000,
    stdout: 'pipe',
    stderr: 'pipe',
    gracefulShutdown: { signal: 'SIGINT', timeout: 20_000 },
    env: {
      PORT: String(PORT),
      REDLOCK_DATA_DIR: process.env.E2E_DATA_DIR,
      REDLOCK_PORT_BASE: String(REDIS_PORT_BASE),
      REDLOCK_SERVER_PORT_BASE: String(REDIS_PORT_BASE + 1_000),
      REDLOCK_PERSISTENCE: 'aof-always',
      REDLOCK_MAX_TTL_MS: String(E2E_MAX_TTL_MS),
      REDLOCK_ADMIN_USER: E2E_LOGIN.username,
      REDLOCK_ADMIN_PASSWORD: E2E_LOGIN.password,
      REDLOCK_VIEWER_USER: E2E_VIEWER.username,
      REDLOCK_VIEWER_PASSWORD: E2E_VIEWER.password,
      REDLOCK_API_KEYS: `e2e-client=${E2E_API_KEY}`,
    },
  },
});
