/**
 * Mutation testing of the lock core's Lua scripts.
 *
 *   node --import tsx scripts/mutation/lua-mutants.ts [--file probe.lua]… [--limit N] [--fresh]
 *
 * The worktree is copied once to a temporary sandbox (node_modules linked). Each mutant is applied
 * to the sandbox's copy of its script, the generated Lua module regenerated there
 * (scripts/gen-lua.mjs), and the script's own tests (TESTS below, on real redis-server) run with
 * --bail 1: a failing run kills the mutant, a passing one lets it survive, a run past the timeout is
 * a timeout (counted as killed, as StrykerJS does). An unmutated control run of each test set comes
 * first: a set that fails without a mutant stops the run (a mutant cannot be judged against it).
 *
 * Incremental: results are kept in reports/lua-mutants.json keyed by the mutant and a hash of every
 * script and of its test files, so a rerun tests only mutants whose script or tests changed.
 * Summary: reports/lua-mutants.md (score per script, the survivors).
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { applyMutant, mutantsOf, type LuaMutant } from './lua-operators';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const SCRIPTS = 'packages/redlock/src/scripts';
const IT = 'packages/redlock/test/integration';

/** Each script's tests, the quickest and most pointed first (a run stops at the first failure). */
export const TESTS: Readonly<Record<string, readonly string[]>> = {
  'acquire.lua': ['redlock-batches', 'redlock-core', 'redlock-contract'],
  'release.lua': ['redlock-release', 'redlock-core', 'redlock-faults'],
  'release-many.lua': ['redlock-batches', 'redlock-release', 'redlock-core'],
  'extend.lua': ['redlock-value-rewrites', 'redlock-core', 'redlock-faults'],
  'fence.lua': ['redlock-fencing', 'redlock-core'],
  'fence-many.lua': ['redlock-batches', 'redlock-fencing', 'redlock-merged-calls'],
  'probe.lua': [
    'redlock-mutation-classes',
    'redlock-quarantine',
    'redlock-restarts',
    'redlock-rollback',
    'redlock-probe-races',
    'redlock-fast-path',
  ],
  '_replacing.lua': ['redlock-rollback', 'redlock-restarts'],
  'mark-clean.lua': ['redlock-quarantine', 'redlock-fencing', 'redlock-restarts'],
  'reseed.lua': ['redlock-fencing', 'redlock-restarts', 'redlock-rollback'],
  'adopt-restart.lua': ['redlock-restarts'],
  'time.lua': ['redlock-core'],
};

interface Result {
  readonly file: string;
  readonly line: number;
  readonly operator: string;
  readonly replacement: string;
  readonly status: 'killed' | 'survived' | 'timeout';
  readonly seconds: number;
  /** The first failing test's name, for a killed mutant. */
  readonly killedBy?: string;
}

function args() {
  const a = process.argv.slice(2);
  const files: string[] = [];
  let limit = Infinity;
  let fresh = false;
  let timeoutMs = 600_000;
  for (let i = 0; i < a.length; i++) {
    if (a[i] === '--file') files.push(a[++i]!);
    else if (a[i] === '--limit') limit = Number(a[++i]);
    else if (a[i] === '--timeout-ms') timeoutMs = Number(a[++i]);
    else if (a[i] === '--fresh') fresh = true;
    else if (a[i] === '--lua') continue;
    else {
      console.error(`unknown argument ${a[i]}; usage: lua-mutants.ts [--file x.lua]… [--limit N] [--timeout-ms N] [--fresh]`);
      process.exit(2);
    }
  }
  return { files, limit, fresh, timeoutMs };
}

const sha = (s: string) => createHash('sha1').update(s).digest('hex');
const testPath = (name: string) => `${IT}/${name}.test.ts`;

function makeSandbox(): string {
  const dir = mkdtempSync(join(tmpdir(), 'lua-mutants-'));
  const skip = new Set(['node_modules', '.git', '.stryker-tmp', 'reports', '.data', 'test-results', 'e2e', '.scratch']);
  for (const entry of readdirSync(root)) {
    if (skip.has(entry) || entry.startsWith('.next') || entry.startsWith('playwright-report')) continue;
    cpSync(join(root, entry), join(dir, entry), { recursive: true });
  }
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

function runTests(sandbox: string, tests: readonly string[], timeoutMs: number): { status: Result['status']; killedBy?: string } {
  const r = spawnSync(
    'nice',
    ['-n', '15', 'npx', 'vitest', 'run', '-c', 'vitest.mutation.config.ts', '--bail', '1', '--maxWorkers', '1', ...tests.map(testPath)],
    { cwd: sandbox, encoding: 'utf8', timeout: timeoutMs, killSignal: 'SIGKILL', env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' } },
  );
  writeFileSync(join(root, 'reports', 'lua-mutants-last.log'), `${r.stdout ?? ''}\n${r.stderr ?? ''}`);
  if (r.error || r.signal) return { status: 'timeout' };
  if (r.status === 0) return { status: 'survived' };
  const plain = (r.stdout ?? '').replace(/\u001b\[[0-9;]*m/g, '');
  const failed = /FAIL\s+(.+)/.exec(plain) ?? /×\s+(.+)/.exec(plain);
  return { status: 'killed', killedBy: failed?.[1]?.trim().slice(0, 160) };
}

function main() {
  const { files, limit, fresh, timeoutMs } = args();
  const cacheFile = join(root, 'reports', 'lua-mutants.json');
  mkdirSync(dirname(cacheFile), { recursive: true });
  const cache: Record<string, Result> =
    !fresh && existsSync(cacheFile) ? (JSON.parse(readFileSync(cacheFile, 'utf8')) as Record<string, Result>) : {};
  const scriptsDir = join(root, SCRIPTS);
  const allScripts = readdirSync(scriptsDir)
    .filter((f) => f.endsWith('.lua'))
    .sort();
  const luaHash = sha(allScripts.map((f) => readFileSync(join(scriptsDir, f), 'utf8')).join('\0'));
  const chosen = files.length > 0 ? files : allScripts;
  const sandbox = makeSandbox();
  const started = Date.now();
  const results: Result[] = [];
  const unjudged: string[] = [];
  let ran = 0;
  try {
    for (const file of chosen) {
      const tests = TESTS[file];
      if (!tests) throw new Error(`no tests listed for ${file} in TESTS`);
      const source = readFileSync(join(scriptsDir, file), 'utf8');
      const testsHash = sha(tests.map((t) => readFileSync(join(root, testPath(t)), 'utf8')).join('\0'));
      const mutants = mutantsOf(file, source);
      const keyOf = (m: LuaMutant) => sha([luaHash, testsHash, m.file, m.line, m.replacement].join('\0'));
      const todo = mutants.filter((m) => !cache[keyOf(m)]);
      if (todo.length > 0 && ran < limit) {
        // Up to three tries: on a loaded machine a timing test may fail once without a mutant.
        let control = runTests(sandbox, tests, timeoutMs);
        for (let i = 0; i < 2 && control.status !== 'survived'; i++) control = runTests(sandbox, tests, timeoutMs);
        if (control.status !== 'survived') {
          // Its mutants cannot be judged against tests that fail without them: say so, go on.
          console.error(
            `${file}: control run failed unmutated three times (${control.status}: ${control.killedBy ?? ''}); its mutants are not judged`,
          );
          unjudged.push(file);
          continue;
        }
      }
      for (const m of mutants) {
        const key = keyOf(m);
        let result = cache[key];
        if (!result) {
          if (ran >= limit) continue;
          ran++;
          const t0 = Date.now();
          writeFileSync(join(sandbox, SCRIPTS, file), applyMutant(source, m));
          const gen = spawnSync('node', ['scripts/gen-lua.mjs'], { cwd: sandbox, encoding: 'utf8' });
          if (gen.status !== 0) throw new Error(`gen-lua failed in the sandbox: ${gen.stderr}`);
          const outcome = runTests(sandbox, tests, timeoutMs);
          writeFileSync(join(sandbox, SCRIPTS, file), source);
          result = {
            file,
            line: m.line,
            operator: m.operator,
            replacement: m.replacement.trim(),
            ...outcome,
            seconds: Math.round((Date.now() - t0) / 1000),
          };
          cache[key] = result;
          writeFileSync(cacheFile, `${JSON.stringify(cache, null, 1)}\n`);
          console.log(`${result.status.padEnd(8)} ${file}:${m.line} ${m.operator}  ${result.replacement}  (${result.seconds}s)`);
        }
        results.push(result);
      }
      spawnSync('node', ['scripts/gen-lua.mjs'], { cwd: sandbox });
    }
  } finally {
    rmSync(sandbox, { recursive: true, force: true });
  }
  const minutes = ((Date.now() - started) / 60_000).toFixed(1);
  const lines = [
    '# Lua mutants (scripts/mutation/lua-mutants.ts)',
    '',
    `Run ${new Date().toISOString()}, ${ran} mutants tested now in ${minutes} min; the rest from reports/lua-mutants.json.`,
    '',
  ];
  lines.push('| script | mutants | killed | timeout | survived | score |', '|---|---|---|---|---|---|');
  for (const file of chosen) {
    const of = results.filter((r) => r.file === file);
    if (of.length === 0) continue;
    const k = of.filter((r) => r.status === 'killed').length;
    const t = of.filter((r) => r.status === 'timeout').length;
    const s = of.filter((r) => r.status === 'survived').length;
    lines.push(`| ${file} | ${of.length} | ${k} | ${t} | ${s} | ${(((k + t) / of.length) * 100).toFixed(1)} % |`);
  }
  if (unjudged.length > 0) lines.push('', `Not judged (their tests failed unmutated): ${unjudged.join(', ')}.`);
  lines.push('', '## Survivors', '');
  for (const r of results.filter((x) => x.status === 'survived')) lines.push(`- ${r.file}:${r.line} ${r.operator}: \`${r.replacement}\``);
  writeFileSync(join(root, 'reports', 'lua-mutants.md'), `${lines.join('\n')}\n`);
  console.log(lines.join('\n'));
}

main();
