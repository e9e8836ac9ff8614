/**
 * `node --import tsx scripts/assemble-image.ts <dir>`: the Docker image's files (after
 * `npm run build`), put together in <dir> for the Dockerfile's final stage to copy whole.
 * What goes in: scripts/support/image-files.ts.
 */
import { resolve } from 'node:path';
import { appRoot } from './support/app-root';
import { describeFatal } from './support/fatal';
import { assembleImage } from './support/image-files';

const target = process.argv[2];
try {
  if (!target) throw new Error('usage: scripts/assemble-image.ts <directory>');
  assembleImage(appRoot(import.meta.url), resolve(target));
} catch (err) {
  console.error(describeFatal(err));
  process.exit(1);
}
