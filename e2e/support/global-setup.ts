import { appRoot } from '../../scripts/support/app-root';
import { ensureBuild } from '../../scripts/support/build-state';
import { nextBinary } from '../../scripts/support/next-process';

/**
 * Playwright's globalSetup: make the console build current once, in the runner, before any worker
 * starts its console (`scripts/start.ts` builds when the build is stale; two workers doing that at
 * once would write the same build directory, and `next build` refuses to run twice). In `npm test`
 * the build tier made it a step earlier: this is the source-hash check only.
 */
export default function globalSetup(): void {
  ensureBuild(appRoot(import.meta.url), nextBinary, console.log);
}
