/**
 * `node --import ./scripts/support/server-only-hook.mjs …`: lets plain Node (through tsx) load the
 * console's server modules outside Next.js. They start with `import 'server-only'`, a marker that
 * Next.js resolves to an empty module on the server and that throws anywhere else; here it resolves
 * to an empty module too. Used by the console's HTTP server process (scripts/console-server.ts).
 */
import { register } from 'node:module';

const HOOK = `
export async function resolve(specifier, context, next) {
  if (specifier === 'server-only') return { url: 'data:text/javascript,export{}', shortCircuit: true };
  return next(specifier, context);
}
`;

register(`data:text/javascript,${encodeURIComponent(HOOK)}`);
