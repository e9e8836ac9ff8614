import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Production: hand Next.js the configuration its build resolved (.next/required-server-files.json)
 * instead of letting it load next.config.ts again. This is what Next.js's own standalone server
 * does (the same environment variable); it keeps TypeScript and the config's imports out of the
 * image (scripts/support/image-files.ts), and runs `npm start` exactly like the image. Headers and
 * redirects do not depend on it: the build wrote them into routes-manifest.json.
 */
export function applyBuiltNextConfig(root: string): void {
  const file = join(root, process.env.NEXT_DIST_DIR || '.next', 'required-server-files.json');
  const { config } = JSON.parse(readFileSync(file, 'utf8')) as { config: unknown };
  process.env.__NEXT_PRIVATE_STANDALONE_CONFIG = JSON.stringify(config);
}
