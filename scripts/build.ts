/**
 * `npm run build`: build the console and stamp the build with a hash of its sources, so that
 * `npm start` knows the build is current. `--if-stale` builds only when the stamp does not match.
 */
import { appRoot } from './support/app-root';
import { ensureBuild, forgetBuild } from './support/build-state';
import { describeFatal } from './support/fatal';
import { nextBinary } from './support/next-process';
import { bundleServer } from './support/server-bundle';

const root = appRoot(import.meta.url);
try {
  if (!process.argv.includes('--if-stale')) forgetBuild(root);
  const built = ensureBuild(root, nextBinary, console.log);
  if (!built) console.log('the console build is current');
  // The server processes as plain JavaScript (the Docker image runs them without tsx): a second.
  await bundleServer(root);
} catch (err) {
  console.error(describeFatal(err));
  process.exit(1);
}
