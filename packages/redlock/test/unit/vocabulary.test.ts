import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as vocabulary from '../../src/vocabulary';
import { LIMITS, VOTE_REASONS } from '../../src';

// `@redlock-console/redlock/vocabulary` is bundled into the console's browser code (lib/api's
// schemas take the core's limits, vote reasons and quarantine causes from it): it must import
// nothing but its own pure modules, transitively.
const src = join(import.meta.dirname, '..', '..', 'src');
function importsOf(file: string): string[] {
  return [...readFileSync(join(src, file), 'utf8').matchAll(/^(?:import|export)[^;]*?from '([^']+)'/gm)].map((m) => m[1]!);
}

describe('the vocabulary entry point', () => {
  it('imports only pure modules of the package (no ioredis, no node:*), transitively', () => {
    const seen = new Set<string>();
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      for (const spec of importsOf(file)) {
        expect(spec.startsWith('./'), `${file} imports ${spec}`).toBe(true);
        visit(`${spec.slice(2)}.ts`);
      }
    };
    visit('vocabulary.ts');
    expect([...seen].sort()).toEqual(['quorum.ts', 'vocabulary.ts']);
  });

  it('is what the core itself uses (the same objects, not copies)', () => {
    expect(vocabulary.LIMITS).toBe(LIMITS);
    expect(vocabulary.VOTE_REASONS).toBe(VOTE_REASONS);
  });
});
