import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import nodeCopyLoader from '../../scripts/support/node-copy-loader.mjs';

// The shim Next.js's server build holds for a module of lib/server (next.config.ts): one import of
// the server's copy and one export per value export; what it cannot mirror faithfully is refused.

const file = join(process.cwd(), 'lib/server/example.ts');
const shim = (source: string): string => nodeCopyLoader.call({ resourcePath: file }, source);

describe('node-copy-loader', () => {
  it('imports the server’s copy once and re-exports each value, once, and no type', () => {
    const out = shim(
      [
        'export const a = 1;',
        'export function f(x: string): string;',
        'export function f(x: number): number;',
        'export function f(x: unknown) { return x; }',
        'export class C {}',
        'export type T = string;',
        'export interface I { x: number }',
        'const hidden = 2;',
        'export { hidden as shown };',
        'export default C;',
      ].join('\n'),
    );
    expect(out.match(/await import\(/g)).toHaveLength(1);
    expect(out).toContain('"lib/server/example"');
    expect(out.split('\n').filter((l) => l.startsWith('export'))).toEqual([
      'export const a = m.a;',
      'export const f = m.f;',
      'export const C = m.C;',
      'export const shown = m.shown;',
      'export default m.default;',
    ]);
  });

  it('refuses what a copy made at import would get wrong: export let, export *, a namespace, a destructured export', () => {
    expect(() => shim('export let counter = 0;')).toThrow(/only `export const`/);
    expect(() => shim("export * from './other';")).toThrow(/cannot be shimmed/);
    expect(() => shim('export namespace N { export const x = 1; }')).toThrow(/namespace/);
    expect(() => shim('export const { a, b } = { a: 1, b: 2 };')).toThrow(/destructured/);
  });
});
