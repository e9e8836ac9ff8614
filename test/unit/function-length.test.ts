import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// Components are split by what they show (a sub-component per visible part, hooks for state and
// effects, pure helpers in small files of their own). What holds it: no function of the product
// over 150 lines, and no file of the product (app/, components/, lib/, the lock core) over 400
// (FILE_EXCEPTIONS lists any file allowed over it, with its length: none now).

const MAX_FUNCTION_LINES = 150;
const MAX_FILE_LINES = 400;
/** Files allowed over the bound, with their length now: one that grows fails too. */
const FILE_EXCEPTIONS: Readonly<Record<string, number>> = {};

/** Every function (declaration, arrow, expression, method, accessor, constructor) longer than `max` lines, as "file:line name (n lines)". */
function longFunctions(file: string, source: string, max = MAX_FUNCTION_LINES): string[] {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true, file.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (
      ts.isFunctionDeclaration(node) ||
      ts.isFunctionExpression(node) ||
      ts.isArrowFunction(node) ||
      ts.isMethodDeclaration(node) ||
      ts.isGetAccessorDeclaration(node) ||
      ts.isSetAccessorDeclaration(node) ||
      ts.isConstructorDeclaration(node)
    ) {
      const first = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
      const last = sf.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = last - first + 1;
      if (lines > max) {
        const named = (node as { name?: ts.Node }).name ?? (ts.isVariableDeclaration(node.parent) ? node.parent.name : undefined);
        found.push(`${file}:${first + 1} ${named ? named.getText(sf) : '(anonymous)'} (${lines} lines)`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

const tracked = (...dirs: string[]) =>
  execFileSync('git', ['ls-files', ...dirs], { encoding: 'utf8' })
    .split('\n')
    .filter((f) => /\.(ts|tsx)$/.test(f) && !f.endsWith('.d.ts'));

describe('functions and files of the product are short enough to read', () => {
  it(`no function of the product is over ${MAX_FUNCTION_LINES} lines`, () => {
    const files = tracked('app', 'components', 'lib', 'packages/redlock/src');
    expect(files.length).toBeGreaterThan(200);
    expect(files.flatMap((f) => longFunctions(f, readFileSync(f, 'utf8')))).toEqual([]);
  });

  it(`no file of the product is over ${MAX_FILE_LINES} lines (but the listed exceptions, which may not grow)`, () => {
    const files = tracked('app', 'components', 'lib', 'packages/redlock/src');
    const long = files
      .map((f) => ({ f, lines: readFileSync(f, 'utf8').split('\n').length - 1 }))
      .filter(({ f, lines }) => lines > (FILE_EXCEPTIONS[f] ?? MAX_FILE_LINES))
      .map(({ f, lines }) => `${f} (${lines} lines)`);
    expect(long).toEqual([]);
  });

  it('finds a long component, arrow, memo-wrapped function and method, and passes one at the bound', () => {
    const body = (n: number) => Array.from({ length: n - 2 }, (_, i) => `  const v${i} = ${i};`).join('\n');
    const source = [
      `export function Long() {\n${body(151)}\n}`,
      `export function AtBound() {\n${body(150)}\n}`,
      `const Arrow = () => {\n${body(151)}\n};`,
      `export const Row = memo(function Row() {\n${body(151)}\n});`,
      `class C {\n  method() {\n${body(151)}\n  }\n}`,
    ].join('\n');
    const found = longFunctions('components/x/long.tsx', source).map((s) => s.replace(/:\d+/, ''));
    expect(found).toEqual([
      'components/x/long.tsx Long (151 lines)',
      'components/x/long.tsx Arrow (151 lines)',
      'components/x/long.tsx Row (151 lines)',
      'components/x/long.tsx method (151 lines)',
    ]);
  });
});
