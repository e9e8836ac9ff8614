import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * docs/security.md is the threat model: every threat names the test that shows its defence. This
 * keeps the two honest: every test it names exists, and every security test is named by it.
 */
const root = join(import.meta.dirname, '..', '..');
const doc = readFileSync(join(root, 'docs', 'security.md'), 'utf8');

function findTest(name: string): boolean {
  if (name.includes('/')) return existsSync(join(root, name));
  return ['test/integration', 'test/unit', 'e2e'].some((dir) => existsSync(join(root, dir, name)));
}

describe('docs/security.md', () => {
  it('names only tests that exist', () => {
    const named = [...doc.matchAll(/`((?:[\w./-]+\/)?[\w.-]+\.(?:test|spec)\.tsx?)`/g)].map((m) => m[1]!);
    expect(named.length).toBeGreaterThan(10);
    for (const name of new Set(named)) expect(findTest(name), name).toBe(true);
  });

  it('names every security test', () => {
    const files = [
      ...readdirSync(join(root, 'test', 'integration')).filter((f) => f.startsWith('security-')),
      ...readdirSync(join(root, 'test', 'unit')).filter((f) => f.startsWith('security-') && f !== 'security-doc.test.ts'),
      ...readdirSync(join(root, 'e2e')).filter((f) => f.startsWith('security')),
    ];
    expect(files.length).toBeGreaterThanOrEqual(10);
    for (const f of files) expect(doc, f).toContain(f);
  });

  it('covers the assets, actors and trust boundaries, and says what is still open', () => {
    for (const heading of ['## Assets', '## Actors', '## Trust boundaries', '## Threats, defences, tests', '## Still open'])
      expect(doc).toContain(heading);
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    expect(readme).toContain('docs/security.md');
    expect(readme).toContain('`REDLOCK_TRUST_PROXY`');
  });
});
