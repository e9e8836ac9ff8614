/**
 * Mutation testing of the lock core's Lua scripts.
 *
 *   node --import tsx scripts/mutation/lua-mutants.ts [--file probe.lua]… [--lines 1-80]… [--limit N] [--fresh] [--recheck-equivalents]
 *
 * --lines keeps only the mutants on those lines of each chosen script (lua-select.ts).
 *
 * The worktree is copied once to a temporary sandbox (node_modules linked). Each mutant is applied
 * to the sandbox's copy of its script, the generated Lua module regenerated there
 * (scripts/gen-lua.mjs), and the script's tests (lua-tests.ts, on real redis-server) run with
 * --bail 1 in two stages (lua-stages.ts): the quick subset first, the full list only for a mutant
 * that survived it. A failing run kills the mutant, a passing one lets it survive, a run past the
 * timeout is a timeout (counted as killed, as StrykerJS does). An unmutated control run of both
 * stages comes first: a script whose tests fail without a mutant is not judged (said on stderr and
 * in the summary), as a mutant cannot be judged against them.
 *
 * Incremental (lua-cache.ts): results are kept in reports/lua-mutants.json by mutant, each with what
 * it was judged against, saved after each mutant. A rerun keeps a killed mutant's result while its
 * script (with the snippets it includes) and the test file that killed it are unchanged (and still
 * listed), and tests a survivor again when its script or anything its stages run changed; older
 * entries: lua-migrate.ts.
 * Mutants shown equivalent (lua-equivalents.ts, its list in scripts/mutation/lua-equivalents.json)
 * are not tested while their script is the one argued about; they are counted apart, out of the
 * score, and a stale entry is named in the summary.
 * Summary: reports/lua-mutants.md (score per script, the survivors).
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { applyMutant, mutantsOf } from './lua-operators';
import { inRanges, parseLineRange, type LineRange } from './lua-select';
import { judgeMutants, parseKiller, provenance, reusable, saveCache, mutantId, type CachedResult, type Current } from './lua-cache';
import { EQUIVALENTS_PATH, loadEquivalents, splitEquivalents, type Equivalent } from './lua-equivalents';
import { control, judge, type Outcome, type Stage } from './lua-stages';
import { FULL_NAME, LUA_TESTS } from './lua-tests';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const SCRIPTS = 'packages/redlock/src/scripts';
const IT = 'packages/redlock/test/integration';

type Result = CachedResult;

function args() {
  const a = process.argv.slice(2);
  const files: string[] = [];
  const lines: LineRange[] = [];
  let limit = Infinity;
  let fresh = false;
  let recheck = false;
  let timeoutMs = 600_000;
  for (let i = 0; i < a.length; i++) {
    if (a[i] === '--file') files.push(a[++i]!);
    else if (a[i] === '--lines') lines.push(parseLineRange(a[++i] ?? ''));
    else if (a[i] === '--limit') limit = Number(a[++i]);
    else if (a[i] === '--timeout-ms') timeoutMs = Number(a[++i]);
    else if (a[i] === '--fresh') fresh = true;
    else if (a[i] === '--recheck-equivalents') recheck = true;
    else if (a[i] === '--lua') continue;
    else {
      console.error(
        `unknown argument ${a[i]}; usage: lua-mutants.ts [--file x.lua]… [--lines FROM-TO]… [--limit N] [--timeout-ms N] [--fresh] [--recheck-equivalents]`,
      );
      process.exit(2);
    }
  }
  return { files, lines, limit, fresh, recheck, timeoutMs };
}

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

function runTests(sandbox: string, tests: readonly string[], testName: string, timeoutMs: number): Outcome {
  const r = spawnSync(
    'nice',
    [
      '-n',
      '15',
      'npx',
      'vitest',
      'run',
      '-c',
      'scripts/mutation/vitest.lua.config.ts',
      '--bail',
      '1',
      '--maxWorkers',
      '1',
      '-t',
      testName,
      ...tests.map(testPath),
    ],
    {
      cwd: sandbox,
      encoding: 'utf8',
      timeout: timeoutMs,
      killSignal: 'SIGKILL',
      // The test list is on the command line; a MUTATION_TESTS/MUTATION_TEST_NAME left in the
      // environment would narrow it again (vitest.mutation.config.ts).
      env: { ...process.env, MUTATION_TESTS: '', MUTATION_TEST_NAME: '', LUA_TEST_ORDER: tests.join(','), NO_COLOR: '1', FORCE_COLOR: '0' },
    },
  );
  writeFileSync(join(root, 'reports', 'lua-mutants-last.log'), `${r.stdout ?? ''}\n${r.stderr ?? ''}`);
  if (r.error || r.signal) return { status: 'timeout' };
  const plain = (r.stdout ?? '').replace(/\u001b\[[0-9;]*m/g, '');
  if (r.status === 0) {
    // A pattern or a file list that matched no test passes vacuously: refuse it.
    if (!/Tests\s+\d+ passed/.test(plain)) throw new Error(`no test ran for ${tests.join(', ')} -t ${testName}:\n${plain.slice(-2000)}`);
    return { status: 'survived' };
  }
  const killer = parseKiller(`${plain}\n${r.stderr ?? ''}`);
  const failed = killer?.name ?? /×\s+(.+)/.exec(plain)?.[1];
  return { status: 'killed', killedBy: failed?.trim().slice(0, 160), ...(killer ? { killer } : {}) };
}

function main() {
  const { files, lines: lineRanges, limit, fresh, recheck, timeoutMs } = args();
  const equivalents = recheck ? [] : loadEquivalents(join(root, EQUIVALENTS_PATH));
  const cacheFile = join(root, 'reports', 'lua-mutants.json');
  mkdirSync(dirname(cacheFile), { recursive: true });
  const cache: Record<string, Result> =
    !fresh && existsSync(cacheFile) ? (JSON.parse(readFileSync(cacheFile, 'utf8')) as Record<string, Result>) : {};
  const sandbox = makeSandbox();
  // The run tests the sandbox, copied once above: every hash a result is judged against is taken
  // from it, now, before any mutant is written into it. An edit to the working tree meanwhile is
  // not what ran, and a result must not be recorded against it.
  const scriptsDir = join(sandbox, SCRIPTS);
  const allScripts = readdirSync(scriptsDir)
    .filter((f) => f.endsWith('.lua'))
    .sort();
  const scriptSources = new Map(allScripts.map((f) => [f, readFileSync(join(scriptsDir, f), 'utf8')]));
  const readScript = (f: string) => {
    const source = scriptSources.get(f);
    if (source === undefined) throw new Error(`no script ${f} in ${SCRIPTS}`);
    return source;
  };
  const chosen = files.length > 0 ? files : allScripts;
  const listed = new Set(chosen.flatMap((f) => [...(LUA_TESTS[f]?.quick ?? []), ...(LUA_TESTS[f]?.full ?? [])]));
  const testSources = new Map([...listed].map((t) => [t, readFileSync(join(sandbox, testPath(t)), 'utf8')]));
  const readTest = (t: string) => testSources.get(t) ?? readFileSync(join(sandbox, testPath(t)), 'utf8');
  const started = Date.now();
  const results: Result[] = [];
  // Equivalent mutants not tested (their entry stands), and entries that no longer do.
  const skipped: Equivalent[] = [];
  const stale: Equivalent[] = [];
  const unjudged: string[] = [];
  let ran = 0;
  // Mutants with no cached result that --limit left untested, by script.
  const untested = new Map<string, number>();
  try {
    for (const file of chosen) {
      const tests = LUA_TESTS[file];
      if (!tests) throw new Error(`no tests listed for ${file} in LUA_TESTS (lua-tests.ts)`);
      const source = readScript(file);
      const now: Current = { script: file, readScript, set: tests, read: readTest };
      const split = splitEquivalents(equivalents, mutantsOf(file, source), now, (path) => readFileSync(join(sandbox, path), 'utf8'));
      stale.push(...split.stale);
      skipped.push(...split.skipped.filter((e) => inRanges(e.line, lineRanges)));
      const mutants = split.judged.filter((m) => inRanges(m.line, lineRanges));
      const todo = mutants.filter((m) => !reusable(cache[mutantId(m)], now));
      const runStage = (stage: Stage) =>
        stage === 'quick'
          ? runTests(sandbox, tests.quick, tests.quickName ?? FULL_NAME, timeoutMs)
          : runTests(sandbox, tests.full, tests.fullName ?? FULL_NAME, timeoutMs);
      if (todo.length > 0 && ran < limit) {
        const failed = control(runStage);
        if (failed) {
          // Its mutants cannot be judged against tests that fail without them: say so, keep the
          // failing run's output (reports/lua-control-<script>.log), go on.
          cpSync(join(root, 'reports', 'lua-mutants-last.log'), join(root, 'reports', `lua-control-${file}.log`));
          console.error(
            `${file}: the ${failed.stage} stage failed unmutated three times (${failed.outcome.status}: ${failed.outcome.killedBy ?? ''}); its mutants are not judged (output: reports/lua-control-${file}.log)`,
          );
          unjudged.push(file);
          continue;
        }
      }
      const test = (m: (typeof mutants)[number]): Result | undefined => {
        if (ran >= limit) {
          untested.set(file, (untested.get(file) ?? 0) + 1);
          return undefined;
        }
        ran++;
        const t0 = Date.now();
        writeFileSync(join(sandbox, SCRIPTS, file), applyMutant(source, m));
        const gen = spawnSync('node', ['scripts/gen-lua.mjs'], { cwd: sandbox, encoding: 'utf8' });
        if (gen.status !== 0) throw new Error(`gen-lua failed in the sandbox: ${gen.stderr}`);
        const outcome = judge(runStage);
        writeFileSync(join(sandbox, SCRIPTS, file), source);
        const { killer: _killer, ...rest } = outcome;
        const result: Result = {
          file,
          line: m.line,
          operator: m.operator,
          replacement: m.replacement.trim(),
          ...rest,
          seconds: Math.round((Date.now() - t0) / 1000),
          ...provenance(outcome, now),
        };
        console.log(
          `${result.status.padEnd(8)} ${file}:${m.line} ${m.operator}  ${result.replacement}  (${result.stage}, ${result.seconds}s)`,
        );
        return result;
      };
      // Each result is saved as soon as it is known (judgeMutants): a stopped run keeps them.
      results.push(...judgeMutants(mutants, cache, now, test, (c) => saveCache(cacheFile, c)));
      const regen = spawnSync('node', ['scripts/gen-lua.mjs'], { cwd: sandbox, encoding: 'utf8' });
      if (regen.status !== 0) throw new Error(`gen-lua failed in the sandbox: ${regen.stderr}`);
    }
  } finally {
    rmSync(sandbox, { recursive: true, force: true });
  }
  const minutes = ((Date.now() - started) / 60_000).toFixed(1);
  const lines = [
    '# Lua mutants (scripts/mutation/lua-mutants.ts)',
    '',
    `Run ${new Date().toISOString()}, ${ran} mutants tested now in ${minutes} min; the rest from reports/lua-mutants.json.` +
      (lineRanges.length > 0 ? ` Lines ${lineRanges.map((r) => `${r.from}-${r.to}`).join(', ')} only.` : ''),
    '',
  ];
  lines.push(
    '| script | mutants | equivalent (not tested) | killed | timeout | survived | score (of the others) |',
    '|---|---|---|---|---|---|---|',
  );
  for (const file of chosen) {
    const of = results.filter((r) => r.file === file);
    const eq = skipped.filter((e) => e.file === file).length;
    if (of.length + eq === 0) continue;
    const k = of.filter((r) => r.status === 'killed').length;
    const t = of.filter((r) => r.status === 'timeout').length;
    const s = of.filter((r) => r.status === 'survived').length;
    const score = of.length > 0 ? `${(((k + t) / of.length) * 100).toFixed(1)} %` : '–';
    lines.push(`| ${file} | ${of.length + eq} | ${eq} | ${k} | ${t} | ${s} | ${score} |`);
  }
  if (stale.length > 0)
    lines.push(
      '',
      `Stale in ${EQUIVALENTS_PATH} (the script changed or the mutant is gone: tested again; examine and update or remove): ` +
        stale.map((e) => `${e.file}:${e.line} \`${e.replacement}\``).join(', '),
    );
  if (unjudged.length > 0) lines.push('', `Not judged (their tests failed unmutated): ${unjudged.join(', ')}.`);
  if (untested.size > 0)
    lines.push(
      '',
      `Not tested (no cached result, over --limit): ${[...untested].map(([f, n]) => `${f} ${n}`).join(', ')}; ${[...untested.values()].reduce((a, b) => a + b, 0)} in all.`,
    );
  lines.push('', '## Survivors', '');
  for (const r of results.filter((x) => x.status === 'survived')) lines.push(`- ${r.file}:${r.line} ${r.operator}: \`${r.replacement}\``);
  writeFileSync(join(root, 'reports', 'lua-mutants.md'), `${lines.join('\n')}\n`);
  console.log(lines.join('\n'));
}

main();
