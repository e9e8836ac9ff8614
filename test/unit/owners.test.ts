import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// docs/architecture.md's "one owner per concept", checked where a pattern can find a restatement:
// each concept's defining text may appear only in its owner's file. Product code only (lib, app,
// components, scripts, bench, the core's src); the chaos harness's mutants patch the owners'
// text on purpose and are the one exception named below.
const PRODUCT = /^(lib|app|components|scripts|bench|packages\/redlock\/src)\/.*\.(ts|tsx|mjs)$/;

const RULES: ReadonlyArray<{ concept: string; pattern: RegExp; owners: readonly string[]; defines?: RegExp }> = [
  {
    concept: 'the quorum size ⌊N/2⌋+1 (quorumSize)',
    pattern: /\/\s*2\s*\)\s*\+\s*1\b/,
    owners: ['packages/redlock/src/quorum.ts', 'chaos/harness/mutants.ts'],
  },
  {
    concept: "the default key prefix 'rl:' (DEFAULT_SETTINGS.keyPrefix)",
    pattern: /['"`]rl:['"`]/,
    owners: ['packages/redlock/src/settings.ts'],
  },
  {
    concept: 'node numbering, from 1 (atNode, nodeNumber)',
    pattern: /\[\s*(n|id|node|nodeId)\s*-\s*1\s*\]|\b(node|id): i \+ 1\b/,
    owners: ['lib/node-number.ts'],
  },
  {
    concept: 'query keys, one hierarchy (queryKeys)',
    pattern: /queryKey:\s*\[\s*['"]/,
    owners: ['lib/client/queries.ts'],
    defines: /export const queryKeys = \{/,
  },
  {
    concept: 'the default drift factor (DEFAULT_SETTINGS.driftFactor)',
    pattern: /driftFactor:\s*0\.01\b/,
    owners: ['packages/redlock/src/settings.ts'],
  },
];

/** A comment line (an example in prose restates nothing). */
const COMMENT = /^\s*(\*|\/\/|\/\*)/;

function productFiles(): string[] {
  return execFileSync('git', ['ls-files'], { encoding: 'utf8' })
    .split('\n')
    .filter((f) => PRODUCT.test(f));
}

function restatements(pattern: RegExp, owners: readonly string[], files: readonly string[], read: (f: string) => string): string[] {
  return files
    .filter((f) => !owners.includes(f))
    .flatMap((f) =>
      read(f)
        .split('\n')
        .flatMap((line, i) => (pattern.test(line) && !COMMENT.test(line) ? [`${f}:${i + 1}: ${line.trim()}`] : [])),
    );
}

describe('one owner per concept (docs/architecture.md)', () => {
  it.each(RULES)('$concept is written out only by its owner', ({ pattern, owners, defines }) => {
    const files = productFiles();
    expect(files.length).toBeGreaterThan(200);
    for (const owner of owners) expect((defines ?? pattern).test(readFileSync(owner, 'utf8')), `${owner} still defines it`).toBe(true);
    expect(restatements(pattern, owners, files, (f) => readFileSync(f, 'utf8'))).toEqual([]);
  });

  // RESP bytes: the core's encoder (a published package, self-contained) and the tooling's reader
  // and writer (chaos/harness/resp.ts: the chaos and test proxies). Everywhere else, tests included,
  // a command is encoded by one of them.
  const RESP_ENCODER = /`\*\$\{[^`]*\\r\\n/;
  const RESP_OWNERS = ['packages/redlock/src/resp.ts', 'chaos/harness/resp.ts'];

  it('a RESP command is encoded only by the core and the tooling owner', () => {
    const files = execFileSync('git', ['ls-files', '*.ts', '*.tsx'], { encoding: 'utf8' }).split('\n').filter(Boolean);
    expect(restatements(RESP_ENCODER, RESP_OWNERS, files, (f) => readFileSync(f, 'utf8'))).toEqual([]);
    expect(restatements(RESP_ENCODER, [], ['x.ts'], () => 'socket.write(`*${args.length}\\r\\n${body}`);')).toHaveLength(1);
  });

  it('each rule finds a restatement when there is one', () => {
    const fake = new Map([
      [
        'lib/x.ts',
        "const q = Math.floor(n / 2) + 1;\nconst p = 'rl:';\nconst s = { driftFactor: 0.01 };\nconst c = clients[id - 1];\nuseQuery({ queryKey: ['x'] });",
      ],
    ]);
    for (const { pattern, owners } of RULES) {
      expect(restatements(pattern, owners, ['lib/x.ts'], (f) => fake.get(f)!)).toHaveLength(1);
    }
  });
});
