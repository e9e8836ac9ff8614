import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';

// docs/architecture.md: "arrows only point down". Folders of the product (lib/<x>, components/<x>,
// app/<x>, the lock core) and the imports between them, read from the source: no folder may reach
// itself again through the others. A cycle means two folders own each other's concepts; the fix is
// to move the shared piece down (e.g. the persistence modes into lib/api, the clocks into components/ui).

type Graph = Map<string, Map<string, string>>;

function folderOf(file: string): string {
  const parts = file.split('/');
  if (parts[0] === 'packages') return 'packages/redlock';
  return parts.length > 2 ? `${parts[0]}/${parts[1]}` : parts[0]!;
}

function importGraph(files: readonly string[], read: (f: string) => string): Graph {
  const graph: Graph = new Map();
  for (const file of files) {
    for (const m of read(file).matchAll(/^(?:import|export)[^'"]*?from\s+['"]([^'"]+)['"]/gm)) {
      let target = m[1]!;
      if (target.startsWith('@/')) target = target.slice(2);
      else if (target.startsWith('.')) target = normalize(join(dirname(file), target));
      else continue;
      const a = folderOf(file);
      const b = folderOf(target);
      if (a === b) continue;
      if (!graph.has(a)) graph.set(a, new Map());
      if (!graph.get(a)!.has(b)) graph.get(a)!.set(b, file);
    }
  }
  return graph;
}

/** Each cycle as a path of folders, each hop named by one file that makes it. */
function cycles(graph: Graph): string[] {
  const found: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string) => {
    state.set(node, 'open');
    stack.push(node);
    for (const [next, via] of graph.get(node) ?? []) {
      if (state.get(next) === 'open') {
        const path = stack.slice(stack.indexOf(next));
        found.push(`${[...path, next].join(' → ')} (last hop: ${via})`);
      } else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of [...graph.keys()].sort()) if (!state.has(node)) visit(node);
  return found;
}

describe('folders import downwards only (docs/architecture.md)', () => {
  it('no folder of the product reaches itself again through its imports', () => {
    const files = execFileSync('git', ['ls-files', 'lib', 'components', 'app', 'packages/redlock/src'], { encoding: 'utf8' })
      .split('\n')
      .filter((f) => /\.(ts|tsx)$/.test(f));
    expect(files.length).toBeGreaterThan(200);
    const graph = importGraph(files, (f) => readFileSync(f, 'utf8'));
    expect(graph.size).toBeGreaterThan(10);
    expect(cycles(graph)).toEqual([]);
  });

  it('finds a cycle when there is one, through aliases and relative paths', () => {
    const source = new Map([
      ['lib/api/a.ts', "import { b } from '../cluster/b';"],
      ['lib/cluster/b.ts', "import type { c } from '@/lib/faults/c';"],
      ['lib/faults/c.ts', "export { a } from '../api/a';"],
    ]);
    const found = cycles(importGraph([...source.keys()], (f) => source.get(f)!));
    expect(found).toEqual(['lib/api → lib/cluster → lib/faults → lib/api (last hop: lib/faults/c.ts)']);
  });
});
