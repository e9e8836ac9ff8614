import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// No fixed sleep in the tests where a condition can be awaited. A sleep that waits for
// something observable (a connection closed, a key gone, a subscriber registered, an event, a
// process exited, a log line) waits on it instead (test/support/cluster.ts's waitFor, Playwright's
// expect.poll / toPass). What is left carries its reason, first word of a comment on its line or the
// line above:
//   poll:    the interval of a wait-until loop
//   absence: a window in which something must NOT happen (an absence cannot be awaited), and why that length
//   work:    models a holder's work
//   pace:    spacing the behaviour under test needs (requests spread over time, a clock to move on)
const TREES = /^(test|e2e|packages\/[^/]+\/test)\/.*\.ts$/;
const SLEEP = /setTimeout\(r|\bsleep\(|waitForTimeout|\bdelay\(/;
const CLASSIFIED = /\/\/\s*(poll|absence|work|pace):/;
/** A helper's definition is not a use: `const sleep = (ms) => new Promise(...)`. */
const DEFINITION = /^\s*(export\s+)?(const|function)\s+(sleep|delay)\b/;

// Left out: this file, whose fakes are sleeps.
const NOT_YET = [
  /^test\/unit\/fixed-sleeps\.test\.ts$/, // this guard's own fake sources
];

/** Each sleep of `text`: its place and its class (null: none given). */
function sleeps(file: string, text: string): Array<{ at: string; kind: string | null }> {
  const lines = text.split('\n');
  return lines.flatMap((line, i) => {
    if (!SLEEP.test(line) || DEFINITION.test(line)) return [];
    const kind = (CLASSIFIED.exec(line) ?? CLASSIFIED.exec(lines[i - 1] ?? ''))?.[1] ?? null;
    return [{ at: `${file}:${i + 1}: ${line.trim()}`, kind }];
  });
}

function unclassified(file: string, text: string): string[] {
  return sleeps(file, text).flatMap((s) => (s.kind === null ? [s.at] : []));
}

function testFiles(): string[] {
  return execFileSync('git', ['ls-files'], { encoding: 'utf8' })
    .split('\n')
    .filter((f) => TREES.test(f) && !NOT_YET.some((p) => p.test(f)));
}

describe('fixed sleeps in the tests', () => {
  it('every sleep left says why it cannot be a wait on a condition', () => {
    const files = testFiles();
    expect(files.length).toBeGreaterThan(100);
    const all = files.flatMap((f) => sleeps(f, readFileSync(f, 'utf8')));
    const counts: Record<string, number> = {};
    for (const s of all) counts[s.kind ?? 'none'] = (counts[s.kind ?? 'none'] ?? 0) + 1;
    console.log(`fixed sleeps: ${all.length}`, counts); // the README's development section quotes these
    expect(all.flatMap((s) => (s.kind === null ? [s.at] : []))).toEqual([]);
  });

  it('finds an unclassified sleep, whatever its spelling, and lets a classified one pass', () => {
    const fake = [
      'const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));',
      'await sleep(300);',
      'await new Promise((resolve) => setTimeout(resolve, 100));',
      'await page.waitForTimeout(400);',
      'await delay(50);',
      'await sleep(20); // poll: waitFor interval',
      '// absence: 300 ms, three times the retry delay',
      'await new Promise((res) => setTimeout(res, 300));',
      'await sleep(1_200); // work: the holder works',
      '// pace: a second between the two requests',
      'await page.waitForTimeout(1_000);',
      'await sleep(10); // let it settle',
    ].join('\n');
    expect(unclassified('fake.ts', fake).map((l) => l.split(':')[1])).toEqual(['2', '3', '4', '5', '12']);
  });

  it('scans every tree that holds tests', () => {
    const files = testFiles();
    for (const tree of ['test/unit/', 'test/integration/', 'e2e/', 'packages/redlock/test/']) {
      expect(
        files.some((f) => f.startsWith(tree)),
        tree,
      ).toBe(true);
    }
  });
});
