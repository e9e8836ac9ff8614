/**
 * A Turbopack loader (next.config.ts `turbopack.rules`): in Next.js's server build, every module of
 * lib/server is replaced by a shim that imports Node's own copy of it, the one the console's server
 * process (scripts/console-server.ts) loaded. Next.js's route handlers, its instrumentation hook and
 * the server then share one module instance: one state, one class per error.
 *
 * The shim: `await import(<the module's URL>)` (left alone by Turbopack: turbopackIgnore), then one
 * `export const` per value export of the module (read with the TypeScript parser; type exports
 * need nothing). The URL comes from REDLOCK_SERVER_MODULES, a pattern whose `*` is the module's
 * path without its extension, which the console's server sets (its sources through tsx, or the
 * bundle's modules: scripts/support/server-bundle.ts); without it (Next.js's build collecting page
 * data) the sources under the working directory.
 */
import { relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function valueExports(source, file) {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const names = [];
  const has = (node, kind) => (ts.canHaveModifiers(node) ? ts.getModifiers(node) : undefined)?.some((m) => m.kind === kind) ?? false;
  for (const st of sf.statements) {
    if (ts.isExportDeclaration(st)) {
      if (st.isTypeOnly) continue;
      if (!st.exportClause || !ts.isNamedExports(st.exportClause))
        throw new Error(`${file}: \`export *\` cannot be shimmed; name the exports`);
      for (const e of st.exportClause.elements) if (!e.isTypeOnly) names.push(e.name.text);
      continue;
    }
    if (ts.isExportAssignment(st)) {
      names.push('default');
      continue;
    }
    if (!has(st, ts.SyntaxKind.ExportKeyword) || has(st, ts.SyntaxKind.DeclareKeyword)) continue;
    if (has(st, ts.SyntaxKind.DefaultKeyword)) names.push('default');
    else if (ts.isFunctionDeclaration(st) || ts.isClassDeclaration(st) || ts.isEnumDeclaration(st)) names.push(st.name.text);
    else if (ts.isVariableStatement(st)) {
      // The shim copies each value once, at import: a binding the module reassigns would go stale.
      if (!(st.declarationList.flags & ts.NodeFlags.Const))
        throw new Error(`${file}: only \`export const\` can be shimmed (a let or var may change)`);
      for (const d of st.declarationList.declarations) {
        if (!ts.isIdentifier(d.name)) throw new Error(`${file}: a destructured export cannot be shimmed`);
        names.push(d.name.text);
      }
    } else if (ts.isModuleDeclaration(st) || ts.isImportEqualsDeclaration(st))
      throw new Error(`${file}: an exported namespace cannot be shimmed`);
  }
  // An overloaded function exports its name once per signature.
  return [...new Set(names)];
}

export default function nodeCopyLoader(source) {
  const path = relative(ROOT, this.resourcePath).split(sep).join('/').replace(/\.ts$/, '');
  const lines = [
    `const pattern = process.env.REDLOCK_SERVER_MODULES || 'file://' + process.cwd() + '/*.ts';`,
    `const m = await import(/* turbopackIgnore: true */ /* webpackIgnore: true */ pattern.replace('*', ${JSON.stringify(path)}));`,
  ];
  for (const name of valueExports(source, this.resourcePath))
    lines.push(name === 'default' ? 'export default m.default;' : `export const ${name} = m.${name};`);
  return lines.join('\n');
}
