/** `npm test` step: make sure the Debian packages the tests need are there (installs them as root). */
import { describeFatal } from './support/fatal';
import { CHROMIUM, CURL, ensureSystemPackage, HAPROXY, NUTCRACKER, PROMTOOL, PYTHON3, REDIS_SERVER } from './support/system-packages';

const known = {
  'redis-server': REDIS_SERVER,
  chromium: CHROMIUM,
  promtool: PROMTOOL,
  curl: CURL,
  python3: PYTHON3,
  nutcracker: NUTCRACKER,
  haproxy: HAPROXY,
} as const;
try {
  for (const name of process.argv.slice(2)) {
    const pkg = known[name as keyof typeof known];
    if (!pkg) throw new Error(`unknown package ${name}; known: ${Object.keys(known).join(', ')}`);
    console.log(`${name}: ${ensureSystemPackage(pkg)}`);
  }
} catch (err) {
  console.error(describeFatal(err));
  process.exit(1);
}
