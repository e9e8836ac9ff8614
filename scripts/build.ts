/**
 * `npm run build`: build the console and stamp the build with a hash of its sources, so that
 * `npm start` knows the build is current. `--if-stale` builds only when the stamp does not match.
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureBuild, forgetBuild } from './support/build-state';
import { describeFatal } from './support/fatal';
import { nextBinary } from './support/next-process';

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));
try {
  if (!process.argv.includes('--if-stale')) forgetBuild(root);
  const built = ensureBuild(root, nextBinary(), console.log);
  if (!built) console.log('the console build is current');
} catch (err) {
  console.error(describeFatal(err));
  process.exit(1);
}
