import { defineConfig, globalIgnores } from 'eslint/config';
import nextVitals from 'eslint-config-next/core-web-vitals';
import nextTypescript from 'eslint-config-next/typescript';

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
    // lib/ is framework-free and has no default exports (ARCHITECTURE.md habits).
    files: ['lib/**/*.ts'],
    ignores: ['**/*.d.ts'],
    rules: { 'import/no-default-export': 'error' },
  },
  globalIgnores(['.next/**', '.next-*/**', 'out/**', 'build/**', 'next-env.d.ts', '.data/**', 'test-results/**',
    'playwright-report/**', 'node_modules/**', 'bench/tmp/**', 'chaos/tmp/**']),
]);
