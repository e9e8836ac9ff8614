/**
 * Lua mutants shown equivalent (scripts/mutation/lua-equivalents.json): what StrykerJS's
 * `// Stryker disable` comment is for TypeScript, kept beside the scripts instead of in them (a
 * comment in a script would change its source, its SHA and every cached result of it).
 *
 * An equivalent mutant behaves as the script does for every input Redis can give it, so no test,
 * however new, can kill it: testing it again after a test changed (lua-cache.ts re-tests every
 * survivor then, at 30–165 s each) only costs time. An entry stands while the mutated script, with
 * the snippets it includes, is the one the argument was made about (`scriptHash`, as lua-cache.ts
 * judges results): once the script changes the argument may no longer hold, the mutant is tested
 * again, and the run lists the entry as stale, to be examined again or removed. An argument that
 * reaches outside the script (a TypeScript caller's arguments, another script's writes) names those
 * files in `dependsOn` with their hashes: a change to one makes the entry stale too.
 * `--recheck-equivalents` ignores the list (tests every mutant as any other).
 */
import { readFileSync } from 'node:fs';
import { judgedAgainst, mutantId, sha, type Current, type Mutant } from './lua-cache';

export interface Equivalent {
  readonly file: string;
  readonly line: number;
  /** The mutated line, trimmed, as lua-operators.ts writes it. */
  readonly replacement: string;
  /** The mutated script's hash with its includes (lua-cache.ts scriptHashOf) when the argument was made. */
  readonly scriptHash: string;
  /** Why no input tells the mutant from the script. */
  readonly why: string;
  /** Files outside the script the argument rests on (repository paths) and their sha1 when it was made. */
  readonly dependsOn?: Readonly<Record<string, string>>;
}

/** Reads a repository file (for `dependsOn`); the runner reads its sandbox copy. */
export type ReadFile = (path: string) => string;

export const EQUIVALENTS_PATH = 'scripts/mutation/lua-equivalents.json';

/** Reads and checks the list (a malformed entry is an error: a typo must not test nothing or skip something). */
export function parseEquivalents(text: string): Equivalent[] {
  const list: unknown = JSON.parse(text);
  if (!Array.isArray(list)) throw new Error(`${EQUIVALENTS_PATH}: expected an array`);
  return list.map((e: unknown, i) => {
    const o = e as Record<string, unknown>;
    const ok =
      typeof o === 'object' &&
      o !== null &&
      typeof o.file === 'string' &&
      Number.isInteger(o.line) &&
      typeof o.replacement === 'string' &&
      typeof o.scriptHash === 'string' &&
      /^[0-9a-f]{40}$/.test(o.scriptHash) &&
      typeof o.why === 'string' &&
      o.why.trim().length >= 10 &&
      (o.dependsOn === undefined ||
        (typeof o.dependsOn === 'object' &&
          o.dependsOn !== null &&
          Object.values(o.dependsOn).every((h) => typeof h === 'string' && /^[0-9a-f]{40}$/.test(h))));
    if (!ok)
      throw new Error(
        `${EQUIVALENTS_PATH}: entry ${i} needs file, line, replacement, scriptHash (sha1), a why, and dependsOn of sha1s if any`,
      );
    return o as unknown as Equivalent;
  });
}

export function loadEquivalents(path: string): Equivalent[] {
  return parseEquivalents(readFileSync(path, 'utf8'));
}

const idOf = (e: Equivalent) => mutantId({ file: e.file, line: e.line, replacement: e.replacement });

/** Does every file the argument rests on still read as it did (a missing file does not)? */
function dependenciesHold(e: Equivalent, readFile: ReadFile): boolean {
  return Object.entries(e.dependsOn ?? {}).every(([path, hash]) => {
    try {
      return sha(readFile(path)) === hash;
    } catch {
      return false;
    }
  });
}

/** The entry that stands for mutant `m` of `now.script`: same mutant, same script (with includes) and dependencies as when it was argued. */
export function standingEquivalent(list: readonly Equivalent[], m: Mutant, now: Current, readFile: ReadFile): Equivalent | undefined {
  const id = mutantId(m);
  const hash = judgedAgainst(now);
  return list.find((e) => e.file === now.script && e.scriptHash === hash && idOf(e) === id && dependenciesHold(e, readFile));
}

/** The entries of `now.script` that no longer stand: the script or a dependency changed, or no mutant of it is that one any more. */
export function staleEquivalents(list: readonly Equivalent[], mutants: readonly Mutant[], now: Current, readFile: ReadFile): Equivalent[] {
  const ids = new Set(mutants.map(mutantId));
  const hash = judgedAgainst(now);
  return list.filter((e) => e.file === now.script && (e.scriptHash !== hash || !ids.has(idOf(e)) || !dependenciesHold(e, readFile)));
}

/** A script's mutants split: those to judge (test or take from the cache), the equivalents not tested, and the stale entries. */
export function splitEquivalents<M extends Mutant>(
  list: readonly Equivalent[],
  mutants: readonly M[],
  now: Current,
  readFile: ReadFile,
): { readonly judged: M[]; readonly skipped: Equivalent[]; readonly stale: Equivalent[] } {
  const judged: M[] = [];
  const skipped: Equivalent[] = [];
  for (const m of mutants) {
    const eq = standingEquivalent(list, m, now, readFile);
    if (eq) skipped.push(eq);
    else judged.push(m);
  }
  return { judged, skipped, stale: staleEquivalents(list, mutants, now, readFile) };
}
