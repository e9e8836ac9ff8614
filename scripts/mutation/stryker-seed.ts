/**
 * A group's StrykerJS incremental file seeded from the narrower runs of its files (run.ts --only
 * keeps each in reports/stryker-incremental-<group>-<file>.json), so that a whole run reuses them:
 * when a group has no incremental file of its own, or a narrower run is newer than it, the reports
 * whose mutated files all belong to the group (and the group's own) are merged into one (newest
 * first) and StrykerJS's incremental mode judges what still stands, as for any older report of its own.
 *
 * A report's test and mutant ids are unique only within it, so they are renumbered; a test is the
 * same across two reports when its file's source is the same and its name is. A test file whose
 * source differs between two reports is taken from the newest; the older reports' mutants that name
 * a test of it (killedBy, coveredBy) are left out, so StrykerJS tests them again. Nothing is reused
 * that StrykerJS would not reuse from one report: each mutant keeps its own file's source and the
 * tests it names, unchanged.
 */

import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

interface TestDefinition {
  readonly id: string;
  readonly name: string;
  readonly [k: string]: unknown;
}
interface TestFile {
  readonly source?: string;
  readonly tests: readonly TestDefinition[];
  readonly [k: string]: unknown;
}
interface MutantResult {
  readonly id: string;
  readonly killedBy?: readonly string[];
  readonly coveredBy?: readonly string[];
  readonly [k: string]: unknown;
}
interface FileResult {
  readonly mutants: readonly MutantResult[];
  readonly [k: string]: unknown;
}
export interface IncrementalReport {
  readonly files: Readonly<Record<string, FileResult>>;
  readonly testFiles?: Readonly<Record<string, TestFile>>;
  readonly [k: string]: unknown;
}

/** The reports (newest first) merged into one; how many mutants were left out because a test file they name differs. */
export function mergeReports(newestFirst: readonly IncrementalReport[]): { readonly report: IncrementalReport; readonly dropped: number } {
  const testFiles: Record<string, { source?: string; tests: TestDefinition[]; [k: string]: unknown }> = {};
  const files: Record<string, FileResult> = {};
  const idOfName = new Map<string, string>();
  let nextTest = 0;
  let nextMutant = 0;
  let dropped = 0;
  for (const report of newestFirst) {
    // This report's test ids, as ids of the merged report; absent for a test file that differs.
    const ids = new Map<string, string>();
    for (const [path, tf] of Object.entries(report.testFiles ?? {})) {
      const kept = (testFiles[path] ??= { ...tf, tests: [] });
      if (kept.source !== tf.source) continue;
      for (const t of tf.tests) {
        const key = `${path}\0${t.name}`;
        let id = idOfName.get(key);
        if (id === undefined) {
          id = String(nextTest++);
          idOfName.set(key, id);
          kept.tests.push({ ...t, id });
        }
        ids.set(t.id, id);
      }
    }
    for (const [path, file] of Object.entries(report.files)) {
      if (files[path]) continue;
      const mutants: MutantResult[] = [];
      for (const m of file.mutants) {
        const named = [...(m.killedBy ?? []), ...(m.coveredBy ?? [])];
        if (named.some((id) => !ids.has(id))) {
          dropped++;
          continue;
        }
        const map = (list?: readonly string[]) => list?.map((id) => ids.get(id)!);
        mutants.push({ ...m, id: String(nextMutant++), killedBy: map(m.killedBy), coveredBy: map(m.coveredBy) });
      }
      files[path] = { ...file, mutants };
    }
  }
  return { report: { ...newestFirst[0], files, testFiles }, dropped };
}

/**
 * Writes `target` (a group's incremental file) from the other reports/stryker-incremental-*.json
 * whose mutated files are all among `files`, when `target` does not exist yet, or when one of those
 * reports is newer than it (a narrower --only run after the group's last run: `target` is merged
 * with them, newest first, so each file's newest results win). Returns the reports used (none:
 * nothing written).
 */
export function seedGroupFile(
  target: string,
  files: readonly string[],
  dir = 'reports',
): { readonly from: string[]; readonly dropped: number } {
  if (!existsSync(dir)) return { from: [], dropped: 0 };
  const read = (path: string) => ({
    path,
    mtime: statSync(path).mtimeMs,
    report: JSON.parse(readFileSync(path, 'utf8')) as IncrementalReport,
  });
  const candidates = readdirSync(dir)
    .filter((f) => /^stryker-incremental-.+\.json$/.test(f))
    .map((f) => join(dir, f))
    .filter((p) => resolve(p) !== resolve(target))
    .map(read)
    .filter((c) => Object.keys(c.report.files).length > 0 && Object.keys(c.report.files).every((f) => files.includes(f)));
  const own = existsSync(target) ? read(target) : undefined;
  if (own && !candidates.some((c) => c.mtime > own.mtime)) return { from: [], dropped: 0 };
  const merged = [...candidates, ...(own && Object.keys(own.report.files).length > 0 ? [own] : [])].sort((a, b) => b.mtime - a.mtime);
  if (merged.length === 0) return { from: [], dropped: 0 };
  const { report, dropped } = mergeReports(merged.map((c) => c.report));
  writeFileSync(target, JSON.stringify(report));
  return { from: merged.map((c) => c.path), dropped };
}
