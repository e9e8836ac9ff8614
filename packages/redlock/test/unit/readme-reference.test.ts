import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import * as publicApi from '@redlock-console/redlock';
import { DEFAULT_SETTINGS } from '@redlock-console/redlock';

// The README's Reference section is hand-written; this keeps it current. The names come from the
// source the declarations are built from (src/settings.ts, src/redlock.ts, src/lock.ts,
// src/events.ts), read with the TypeScript compiler: a setting, acquire option, public method or
// event added there without a README entry fails here, and so does a default the README misstates.

const packageDir = join(import.meta.dirname, '..', '..');
const readme = readFileSync(join(packageDir, 'README.md'), 'utf8');
const reference = readme.slice(readme.indexOf('## Reference'), readme.indexOf('\n## ', readme.indexOf('## Reference') + 1));

function sourceOf(file: string): ts.SourceFile {
  const path = join(packageDir, 'src', file);
  return ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.ES2022, true);
}

function find<T extends ts.Node>(file: string, test: (n: ts.Node) => n is T, name: string): T {
  let found: T | undefined;
  const visit = (n: ts.Node) => {
    if (!found && test(n) && (n as unknown as { name?: ts.Identifier }).name?.text === name) found = n;
    ts.forEachChild(n, visit);
  };
  visit(sourceOf(file));
  if (!found) throw new Error(`${name} not found in ${file}`);
  return found;
}

const memberName = (m: ts.ClassElement | ts.TypeElement): string | null => {
  const name = m.name;
  if (!name) return null;
  if (ts.isIdentifier(name) || ts.isStringLiteral(name)) return name.text;
  if (ts.isComputedPropertyName(name)) return `[${name.expression.getText()}]`;
  if (ts.isPrivateIdentifier(name)) return null;
  return null;
};

function interfaceMembers(file: string, name: string): string[] {
  return find(file, ts.isInterfaceDeclaration, name)
    .members.map(memberName)
    .filter((n): n is string => n !== null);
}

/** Public methods and accessors of a class: not private/protected, not @internal, not the constructor. */
function publicMembers(file: string, name: string): string[] {
  return find(file, ts.isClassDeclaration, name)
    .members.filter((m) => ts.isMethodDeclaration(m) || ts.isGetAccessorDeclaration(m) || ts.isPropertyDeclaration(m))
    .filter((m) => !(ts.getCombinedModifierFlags(m as ts.Declaration) & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected)))
    .filter((m) => !ts.getJSDocTags(m).some((t) => t.tagName.text === 'internal'))
    .map(memberName)
    .filter((n): n is string => n !== null);
}

/** A README table row's cells for `name`, e.g. | `retryCount` | `10` | … |. */
function row(name: string): string[] | null {
  const line = reference.split('\n').find((l) => l.startsWith(`| \`${name}\` |`) || l.startsWith(`| \`'${name}'\` |`));
  return line ? line.split('|').map((c) => c.trim()) : null;
}

describe('README Reference', () => {
  it('has a row for every setting of RedlockSettings, with the default of DEFAULT_SETTINGS', () => {
    const settings = interfaceMembers('settings.ts', 'RedlockSettings');
    expect(settings.length).toBeGreaterThan(10);
    const problems: string[] = [];
    for (const name of settings) {
      const cells = row(name);
      const value = (DEFAULT_SETTINGS as unknown as Record<string, unknown>)[name];
      const expected = typeof value === 'string' ? `\`'${value}'\`` : `\`${String(value)}\``;
      if (!cells) problems.push(`${name}: no row`);
      else if (cells[2] !== expected) problems.push(`${name}: README says ${cells[2]}, DEFAULT_SETTINGS has ${expected}`);
    }
    expect(problems).toEqual([]);
  });

  it('has a row for every acquire option (AcquireOptions)', () => {
    const options = interfaceMembers('redlock.ts', 'AcquireOptions');
    expect(options).toContain('maxWaitMs');
    expect(options.filter((o) => !row(o))).toEqual([]);
  });

  it('has a row for every event (RedlockEvents)', () => {
    const events = interfaceMembers('events.ts', 'RedlockEvents');
    expect(events).toContain('lock-lost');
    expect(events.filter((e) => !row(e))).toEqual([]);
  });

  it('names every public method and property of Redlock and Lock', () => {
    const names = [...publicMembers('redlock.ts', 'Redlock'), ...publicMembers('lock.ts', 'Lock')];
    for (const expected of ['acquire', 'using', 'connect', 'markNodesClean', 'quit', 'extend', 'release', 'fence', '[Symbol.asyncDispose]'])
      expect(names).toContain(expected);
    expect(names.filter((n) => !reference.includes(`\`${n}`) && !reference.includes(`**\`${n}`))).toEqual([]);
  });

  it('names every value the main entry point exports', () => {
    const exported = Object.keys(publicApi);
    expect(exported).toContain('isRedlockError');
    expect(exported.filter((n) => !reference.includes(`\`${n}`))).toEqual([]);
  });
});
