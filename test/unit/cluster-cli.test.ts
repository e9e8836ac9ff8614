import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * `npm run cluster -- help` printed a zod stack trace. The script, spawned as npm runs it:
 * help prints the usage and exits 0; every argument it cannot read is one line on stderr and exit
 * 2, before it looks for a console or starts anything.
 */
const root = join(import.meta.dirname, '..', '..');
const dataDir = mkdtempSync(join(tmpdir(), 'redlock-cluster-cli-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

function cluster(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/cluster.ts', ...args], {
      cwd: root,
      // An empty data dir: nothing running there, so nothing can be acted on by mistake.
      env: { ...process.env, REDLOCK_DATA_DIR: dataDir, NODE_OPTIONS: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('npm run cluster -- …', () => {
  it('help (and -h) prints the usage, every action and option, and exits 0', async () => {
    const runs = await Promise.all([cluster('help'), cluster('crash', '-h')]);
    for (const run of runs) {
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/^Usage: npm run cluster -- \[command\]/);
      for (const word of ['status', 'crash', 'restart', 'latency', 'heal', '--latency-ms', '--delay-ms', '--persistence'])
        expect(run.stdout).toContain(word);
    }
  }, 60_000);

  it('refuses what it cannot read in one line naming the mistake, exit 2, no stack trace', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['bogus'], /unknown command "bogus"/],
      [['crash'], /crash needs a node number/],
      [['latency', '1'], /latency needs --latency-ms/],
      [['restart', '1', '--delay-ms', 'soon'], /--delay-ms must be a whole number/],
      [['crash', '1', '--latency-ms', '5'], /crash takes no --latency-ms/],
      // Read well, but no console runs under this data dir: also one line.
      [['crash', '2'], /no running console found under/],
    ];
    const runs = await Promise.all(cases.map(([args]) => cluster(...args)));
    runs.forEach((run, i) => {
      const [args, message] = cases[i]!;
      const where = `cluster ${args.join(' ')}: ${run.stderr}`;
      expect(run.code, where).toBe(2);
      expect(run.stdout, where).toBe('');
      expect(run.stderr.trimEnd().split('\n'), where).toHaveLength(1);
      expect(run.stderr, where).toMatch(/^error: /);
      expect(run.stderr, where).toMatch(message);
      expect(run.stderr, where).not.toMatch(/ZodError|\n\s+at /);
    });
  }, 60_000);
});
