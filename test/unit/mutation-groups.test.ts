import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GROUPS } from '../../scripts/mutation/groups.mjs';
import { SAFETY_TS } from '../../scripts/mutation/safety-files.mjs';

// npm run mutation runs StrykerJS group by group (scripts/mutation/groups.mjs): a safety file left
// out of every group would never be measured, one in two groups measured twice, and a test file
// renamed away would silently stop killing mutants.
describe('the mutation groups', () => {
  it('hold every safety-path file exactly once', () => {
    const grouped = GROUPS.flatMap((g) => g.files);
    expect([...grouped].sort()).toEqual([...SAFETY_TS].sort());
  });

  it('name test files that exist, and group names that are unique', () => {
    for (const g of GROUPS)
      for (const t of g.tests)
        expect(
          ['unit', 'integration'].some((d) => existsSync(`packages/redlock/test/${d}/${t}.test.ts`)),
          `${g.name}: ${t}`,
        ).toBe(true);
    expect(new Set(GROUPS.map((g) => g.name)).size).toBe(GROUPS.length);
  });
});
