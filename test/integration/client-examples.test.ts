import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_KEY, startApi, startLockServiceServer, type ApiHarness, type LockServiceServer } from '../support/api';

/**
 * The client examples a lock-service user copies work as they stand — the
 * README's curl block (run by bash, verbatim) and examples/lock.py (Python's standard library) —
 * against the lock service's fast path on a real socket.
 */
let api: ApiHarness;
let fast: LockServiceServer;
beforeAll(async () => {
  // Not a test of node timeouts: 1 s, so that a busy machine's stall is not a master that did not answer.
  api = await startApi({ nodes: 3, maxTtlMs: 10_000, nodeTimeoutMs: 1_000 });
  fast = await startLockServiceServer();
});
afterAll(async () => {
  await fast?.close();
  await api?.stop();
});

// Asynchronous: the server under test runs in this process, a synchronous child would block it.
const run = promisify(execFile);
const env = () => ({ ...process.env, BASE: `http://127.0.0.1:${fast.port}`, KEY: API_KEY });

describe('client examples', () => {
  it("the README's curl block takes, extends and releases invoice-42", async () => {
    const readme = readFileSync('README.md', 'utf8');
    const from = readme.indexOf('Over HTTP (an API key');
    const block = /```bash\n([\s\S]*?)```/.exec(readme.slice(from))?.[1];
    expect(block, 'the README has the curl block').toBeTruthy();
    const { stdout: out } = await run('bash', ['-euo', 'pipefail', '-c', block!], { env: env(), encoding: 'utf8', timeout: 30_000 });
    const lines = out.trim().split('\n');
    expect(JSON.parse(lines[0]!)).toMatchObject({ resources: ['invoice-42'], token: expect.any(String) });
    expect(JSON.parse(lines[1]!)).toMatchObject({ resources: ['invoice-42'], validityMs: expect.any(Number) });
    expect(JSON.parse(lines[2]!)).toMatchObject({ released: true });
  });

  it('examples/lock.py (standard library) takes, extends and releases it too', async () => {
    const { stdout: out } = await run('python3', ['examples/lock.py'], { env: env(), encoding: 'utf8', timeout: 30_000 });
    expect(out).toMatch(/^granted, fence \d+\nextended, valid for \d+ ms\nreleased\n$/);
  });
});
