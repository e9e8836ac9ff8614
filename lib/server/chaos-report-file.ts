import { readFile, stat } from 'node:fs/promises';
import { isAbsolute, relative, resolve } from 'node:path';
import { chaosReportSchema, type ChaosReportResponse } from '../api/chaos-report';

/** Where the latest report is: REDLOCK_CHAOS_REPORT, else chaos/reports/latest.json under `cwd`. */
export function chaosReportPath(env: Readonly<Record<string, string | undefined>> = process.env, cwd = process.cwd()): string {
  const configured = env.REDLOCK_CHAOS_REPORT?.trim();
  return resolve(cwd, configured || 'chaos/reports/latest.json');
}

export type ChaosReportRead = { ok: true; value: ChaosReportResponse } | { ok: false; reason: 'missing' | 'invalid'; message: string };

/** Read and validate the latest chaos report; never throws for a missing or malformed file. */
export async function readChaosReport(path: string, cwd = process.cwd()): Promise<ChaosReportRead> {
  const rel = relative(cwd, path);
  const source = rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : path;
  let text: string;
  let modifiedAt: number;
  try {
    [text, modifiedAt] = await Promise.all([readFile(path, 'utf8'), stat(path).then((s) => s.mtimeMs)]);
  } catch {
    return { ok: false, reason: 'missing', message: `no chaos report at ${source} yet: run \`npm run chaos -- --profile ci --seed 1\`` };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { ok: false, reason: 'invalid', message: `${source} is not JSON (${(err as Error).message}): run the chaos harness again` };
  }
  const parsed = chaosReportSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      ok: false,
      reason: 'invalid',
      message: `${source} is not a chaos report of this version (${issue?.path.join('.') || 'root'}: ${issue?.message}): run the chaos harness again`,
    };
  }
  return { ok: true, value: { report: parsed.data, source, modifiedAt: Math.round(modifiedAt), reference: null } };
}

/** The CI profile's report shipped in the repository (seed 1, from a clean-clone CI run). */
export const REFERENCE_REPORT = 'chaos/reference/ci-seed-1.json';

/**
 * This machine's latest report; while there is none, the shipped reference report, marked as such
 * (an operator sees what the harness checks and what a passing run looks like before running it).
 * A local report that exists but is broken is reported as broken, not papered over.
 */
export async function readLatestOrReference(path: string, cwd = process.cwd()): Promise<ChaosReportRead> {
  const own = await readChaosReport(path, cwd);
  if (own.ok || own.reason !== 'missing') return own;
  const shipped = await readChaosReport(resolve(cwd, REFERENCE_REPORT), cwd);
  if (!shipped.ok) return own;
  const r = shipped.value.report;
  const note = `the ${r.profile} profile's run with seed ${r.seed} on ${r.startedAt.slice(0, 10)} (a clean-clone CI run, shipped with the console): this machine has no report of its own yet`;
  return { ok: true, value: { ...shipped.value, reference: { note } } };
}
