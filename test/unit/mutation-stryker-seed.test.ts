import { existsSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { mergeReports, seedGroupFile, type IncrementalReport } from '../../scripts/mutation/stryker-seed';

// run.ts seeds a whole group's StrykerJS incremental file from its files' --only runs, so that a
// whole `npm run mutation` reuses them. Each report numbers its tests and mutants from 0.

const core = 'packages/redlock/test/integration/redlock-core.test.ts';
const grantTs = 'packages/redlock/src/grant.ts';
const groupTs = 'packages/redlock/src/grant-group.ts';

function report(
  file: string,
  testSource: string,
  mutants: IncrementalReport['files'][string]['mutants'],
  names = ['acquire', 'release'],
): IncrementalReport {
  return {
    schemaVersion: '2',
    files: { [file]: { source: `// ${file}`, language: 'typescript', mutants } },
    testFiles: {
      [core]: {
        source: testSource,
        tests: names.map((name, i) => ({ id: String(i), name })),
      },
    },
  };
}
const newer = report(groupTs, 'v1', [{ id: '0', status: 'Killed', killedBy: ['1'], coveredBy: ['0', '1'] }]);
// The older run numbered the same two tests the other way round.
const older = report(
  grantTs,
  'v1',
  [
    { id: '0', status: 'Killed', killedBy: ['1'], coveredBy: ['1'] },
    { id: '1', status: 'NoCoverage' },
  ],
  ['release', 'acquire'],
);

describe('StrykerJS incremental reports merged into a group', () => {
  it("keeps every file's mutants, each naming the same tests by name under the merged ids", () => {
    const { report: merged, dropped } = mergeReports([newer, older]);
    expect(dropped).toBe(0);
    const tests = merged.testFiles![core]!.tests;
    expect(tests.map((t) => t.name)).toEqual(['acquire', 'release']);
    const nameOf = (id: string) => tests.find((t) => t.id === id)!.name;
    const [g] = merged.files[groupTs]!.mutants;
    const [k, n] = merged.files[grantTs]!.mutants;
    expect(g!.killedBy!.map(nameOf)).toEqual(['release']);
    expect(k!.killedBy!.map(nameOf)).toEqual(['acquire']);
    expect(n).toMatchObject({ status: 'NoCoverage' });
    expect(new Set([g!.id, k!.id, n!.id]).size).toBe(3);
  });

  it('a test file that changed between the two runs: the older mutants naming its tests are left out (tested again)', () => {
    const changed = report(grantTs, 'v0', older.files[grantTs]!.mutants);
    const { report: merged, dropped } = mergeReports([newer, changed]);
    expect(dropped).toBe(1);
    expect(merged.testFiles![core]!.source).toBe('v1');
    expect(merged.files[grantTs]!.mutants).toEqual([expect.objectContaining({ status: 'NoCoverage' })]);
  });

  it('the newest report wins for a file in both', () => {
    const again = report(groupTs, 'v1', [{ id: '0', status: 'Survived', coveredBy: ['0'] }]);
    expect(mergeReports([newer, again]).report.files[groupTs]!.mutants).toEqual([expect.objectContaining({ status: 'Killed' })]);
  });
});

describe("a group's incremental file seeded from its files' runs", () => {
  let dir = '';
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("merges the reports whose files are all the group's, newest first, and only when the group has none", () => {
    dir = mkdtempSync(join(tmpdir(), 'seed-'));
    const write = (name: string, r: IncrementalReport, mtime: number) => {
      writeFileSync(join(dir, name), JSON.stringify(r));
      utimesSync(join(dir, name), mtime, mtime);
    };
    write('stryker-incremental-grant-grant.json', older, 1_000);
    write('stryker-incremental-grant-grant-group.json', newer, 2_000);
    write('stryker-incremental-fence-ahead.json', report('packages/redlock/src/fence-ahead.ts', 'v1', []), 3_000);
    const target = join(dir, 'stryker-incremental-grant.json');
    const seeded = seedGroupFile(target, [grantTs, groupTs], dir);
    expect(seeded.from.map((p) => p.replace(/^.*\//, ''))).toEqual([
      'stryker-incremental-grant-grant-group.json',
      'stryker-incremental-grant-grant.json',
    ]);
    expect(Object.keys((JSON.parse(readFileSync(target, 'utf8')) as IncrementalReport).files).sort()).toEqual([groupTs, grantTs]);
    writeFileSync(target, '{"files":{}}');
    expect(seedGroupFile(target, [grantTs, groupTs], dir).from).toEqual([]);
    expect(readFileSync(target, 'utf8')).toBe('{"files":{}}');
    expect(existsSync(join(dir, 'stryker-incremental-fence.json'))).toBe(false);
  });

  it("a narrower run newer than the group's own file is merged into it, its file's results winning; an older one is not", () => {
    dir = mkdtempSync(join(tmpdir(), 'seed-'));
    const write = (name: string, r: IncrementalReport, mtime: number) => {
      writeFileSync(join(dir, name), JSON.stringify(r));
      utimesSync(join(dir, name), mtime, mtime);
    };
    const target = join(dir, 'stryker-incremental-grant.json');
    // The group's own run: grant.ts's mutants and grant-group.ts's, the latter survived.
    const group = mergeReports([report(groupTs, 'v1', [{ id: '0', status: 'Survived', coveredBy: ['0'] }]), older]).report;
    write('stryker-incremental-grant.json', group, 2_000);
    write('stryker-incremental-grant-grant.json', older, 1_000);
    expect(seedGroupFile(target, [grantTs, groupTs], dir).from).toEqual([]);
    // Then grant-group.ts alone, with a test that kills its mutant.
    write('stryker-incremental-grant-grant-group.json', newer, 3_000);
    const seeded = seedGroupFile(target, [grantTs, groupTs], dir);
    expect(seeded.from.map((p) => p.replace(/^.*\//, ''))).toEqual([
      'stryker-incremental-grant-grant-group.json',
      'stryker-incremental-grant.json',
      'stryker-incremental-grant-grant.json',
    ]);
    const merged = JSON.parse(readFileSync(target, 'utf8')) as IncrementalReport;
    expect(merged.files[groupTs]!.mutants).toEqual([expect.objectContaining({ status: 'Killed' })]);
    expect(merged.files[grantTs]!.mutants).toHaveLength(2);
  });
});
