import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

// The product imports no tooling (chaos/, bench/, test/, scripts/), and the lock core is imported by its package name and entry points only: the lint rule in
// eslint.config.mjs refuses deep imports from the rest of the project, and console code or a
// framework imported from inside the package.
const eslint = new ESLint({ cwd: process.cwd() });

async function restricted(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return result!.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('imports of the lock core', () => {
  it.each([
    ["import { LockNode } from '@redlock-console/redlock/src/node';", 'lib/inspect/x.ts'],
    ["import { Redlock } from '../../packages/redlock/src';", 'lib/server/events/x.ts'],
    ["import { markNodeClean } from '../../lib/redlock/epoch';", 'bench/workloads/x.ts'],
    ["import { ScriptCall } from '@redlock-console/redlock/dist/index.js';", 'bench/x.ts'],
  ])('%s in %s is refused', async (code, file) => {
    expect(await restricted(file, `${code}\nexport const x = 1;\n`)).toHaveLength(1);
  });

  it.each(["import { Redlock } from '@redlock-console/redlock';", "import { ALL_SCRIPTS } from '@redlock-console/redlock/internals';"])(
    '%s is allowed',
    async (code) => {
      expect(await restricted('lib/inspect/x.ts', `${code}\nexport const x = 1;\n`)).toEqual([]);
    },
  );

  it.each(["import { config } from '@/lib/config';", "import { z } from 'zod';", "import { NextResponse } from 'next/server';"])(
    'inside the package, %s is refused',
    async (code) => {
      expect(await restricted('packages/redlock/src/x.ts', `${code}\nexport const x = 1;\n`)).toHaveLength(1);
    },
  );

  it.each([
    ["import { NEMESES } from '../../chaos/harness/nemeses';", 'lib/server/x.ts'],
    ["import { NEMESES } from '@/chaos/harness/nemeses';", 'components/chaos/x.tsx'],
    ["import { startRedisNodes } from '@/test/support/redis-nodes';", 'lib/cluster/x.ts'],
    ["import { BenchCluster } from '../../bench/harness/cluster';", 'app/api/x/route.ts'],
    ["import { describeFatal } from '../../scripts/support/fatal';", 'lib/inspect/x.ts'],
  ])('the product importing tooling, %s in %s, is refused', async (code, file) => {
    expect(await restricted(file, `${code}\nexport const x = 1;\n`)).toHaveLength(1);
  });

  it.each([
    ["import { NEMESES } from '../harness/nemeses';", 'chaos/workers/x.ts'],
    ["import { chaosReportPath } from '../../lib/server/chaos-report-file';", 'test/unit/x.test.ts'],
    ["import { NemesisTable } from '../chaos/nemesis-table';", 'components/ui/x.tsx'],
  ])('%s in %s is allowed', async (code, file) => {
    expect(await restricted(file, `${code}\nexport const x = 1;\n`)).toEqual([]);
  });
});
