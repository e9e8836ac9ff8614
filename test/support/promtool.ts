import { accessSync, constants } from 'node:fs';

/** Prometheus's promtool (Debian's `prometheus` package; `npm test` installs it as root). */
export function findPromtool(): string {
  for (const path of ['/usr/bin/promtool', '/usr/local/bin/promtool']) {
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // next
    }
  }
  throw new Error('promtool is not installed: run `sudo apt-get install prometheus` (npm test does it as root)');
}
