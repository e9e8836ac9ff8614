import { defineConfig, globalIgnores } from 'eslint/config';
import nextVitals from 'eslint-config-next/core-web-vitals';
import nextTypescript from 'eslint-config-next/typescript';

/** Deep imports of the lock core, refused outside the package. */
const CORE_BY_NAME = [
  {
    group: ['@redlock-console/redlock/*', '!@redlock-console/redlock/internals', '!@redlock-console/redlock/vocabulary'],
    message: "Import the lock core from '@redlock-console/redlock' (or '/vocabulary', '/internals'), not its files.",
  },
  {
    group: ['**/packages/redlock', '**/packages/redlock/**', '**/lib/redlock', '**/lib/redlock/**'],
    message: "Import the lock core by its package name '@redlock-console/redlock'.",
  },
];

/** The tooling beside the product. */
const NO_TOOLING = {
  group: [
    '@/chaos/**',
    '@/bench/**',
    '@/test/**',
    '@/e2e/**',
    '@/scripts/**',
    '**/chaos/harness/**',
    '**/chaos/workers/**',
    '**/chaos/run',
    '**/bench/**',
    '**/test/**',
    '**/e2e/**',
    '**/scripts/**',
  ],
  message: 'The product imports no tooling (chaos/, bench/, test/, e2e/, scripts/): move what both need into lib/ or the core.',
};

export default defineConfig([
  ...nextVitals,
  ...nextTypescript,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'import/no-default-export': 'off',
    },
  },
  {
    // lib/ is framework-free and has no default exports (docs/architecture.md: the layers).
    files: ['lib/**/*.ts'],
    rules: { 'import/no-default-export': 'error' },
  },
  {
    // The lock core is a package (packages/redlock): everything else imports it by its name and
    // entry points only, never its files, so its exports map is the one contract.
    files: ['**/*.{ts,tsx,mjs}'],
    ignores: ['packages/redlock/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: CORE_BY_NAME }] },
  },
  {
    // The product (the console's pages, components and lib/) imports no tooling: the chaos harness,
    // the bench, the tests and the scripts live beside it (chaos/, bench/, test/, e2e/, scripts/), so
    // the product's import graph shows only the product (docs/architecture.md).
    files: ['app/**/*.{ts,tsx}', 'components/**/*.{ts,tsx}', 'lib/**/*.{ts,tsx}'],
    ignores: ['**/*.test.{ts,tsx}'],
    rules: { 'no-restricted-imports': ['error', { patterns: [...CORE_BY_NAME, NO_TOOLING] }] },
  },
  {
    // ...and the package stands alone: no console code, no framework.
    files: ['packages/redlock/src/**/*.ts'],
    ignores: ['**/*.d.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@/*', '../../*', 'next', 'next/*', 'react', 'react/*', 'zod', 'server-only'],
              message:
                'The lock core is framework-free and self-contained: it imports only node:*, ioredis, redis-parser and its own files.',
            },
          ],
        },
      ],
      'import/no-default-export': 'error',
    },
  },
  globalIgnores([
    'packages/*/dist/**',
    'dist/**',
    '.next/**',
    '.next-*/**',
    'out/**',
    'build/**',
    'next-env.d.ts',
    '.data/**',
    'test-results/**',
    'playwright-report/**',
    'node_modules/**',
    'bench/tmp/**',
    'chaos/tmp/**',
    // Local notes and throwaway scripts (git-ignored): not the product.
    '.scratch/**',
    '.stryker-tmp/**',
  ]),
]);
