import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { ClusterConfigError } from '../../lib/cluster/errors';

export interface SystemPackage {
  /** Executable to look for. */
  binary: string;
  /** Debian package that provides it. */
  debianPackage: string;
  /** Absolute paths to try besides PATH. */
  paths: readonly string[];
  /** One line telling a non-root user how to get it. */
  hint: string;
}

export const REDIS_SERVER: SystemPackage = {
  binary: 'redis-server',
  debianPackage: 'redis-server',
  paths: ['/usr/bin/redis-server', '/usr/local/bin/redis-server'],
  hint:
    'redis-server is not installed: run `sudo apt-get install redis-server` (macOS: `brew install redis`), ' +
    'set REDIS_SERVER=/path/to/redis-server, or start masters with `docker compose up` and set REDLOCK_NODES',
};

export const CHROMIUM: SystemPackage = {
  binary: 'chromium',
  debianPackage: 'chromium',
  paths: ['/usr/bin/chromium'],
  hint: 'Chromium is needed for the browser tests: run `sudo apt-get install chromium`',
};

export const PROMTOOL: SystemPackage = {
  binary: 'promtool',
  debianPackage: 'prometheus',
  paths: ['/usr/bin/promtool'],
  hint: 'promtool (Prometheus) checks the metrics and the alert rules: run `sudo apt-get install prometheus`',
};

export const CURL: SystemPackage = {
  binary: 'curl',
  debianPackage: 'curl',
  paths: ['/usr/bin/curl'],
  hint: "curl runs the README's HTTP examples in the tests: run `sudo apt-get install curl`",
};

export const NUTCRACKER: SystemPackage = {
  binary: 'nutcracker',
  debianPackage: 'nutcracker',
  // Debian installs it to /usr/sbin, often not on a user's PATH.
  paths: ['/usr/sbin/nutcracker', '/usr/bin/nutcracker', '/usr/local/sbin/nutcracker'],
  hint: 'nutcracker (twemproxy) puts a lock node behind a real proxy in the tests: run `sudo apt-get install nutcracker`',
};

export const HAPROXY: SystemPackage = {
  binary: 'haproxy',
  debianPackage: 'haproxy',
  // Debian installs it to /usr/sbin, often not on a user's PATH.
  paths: ['/usr/sbin/haproxy', '/usr/bin/haproxy', '/usr/local/sbin/haproxy'],
  hint: "haproxy runs docker-compose.yml's load balancer config in front of two lock services in the tests: run `sudo apt-get install haproxy`",
};

export const PYTHON3: SystemPackage = {
  binary: 'python3',
  debianPackage: 'python3',
  paths: ['/usr/bin/python3'],
  hint: 'python3 runs the Python client example (examples/lock.py) in the tests: run `sudo apt-get install python3`',
};

/** The package's binary: one of its known paths, or on PATH; null when it is not installed. */
export function which(pkg: SystemPackage): string | null {
  const dirs = (process.env.PATH ?? '')
    .split(':')
    .filter(Boolean)
    .map((d) => `${d}/${pkg.binary}`);
  for (const file of [...pkg.paths, ...dirs]) {
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // keep looking
    }
  }
  return null;
}

/**
 * Path of the package's binary. When it is missing and we are root on a Debian-like system,
 * install it with apt-get (the same way CI does); otherwise stop with the package's hint.
 */
export function ensureSystemPackage(pkg: SystemPackage, log: (line: string) => void = console.log): string {
  const override = pkg.binary === 'redis-server' ? process.env.REDIS_SERVER : undefined;
  if (override) {
    try {
      accessSync(override, constants.X_OK);
      return override;
    } catch {
      throw new ClusterConfigError(
        `REDIS_SERVER=${override} is not an executable file; fix the path or unset it to use the one on PATH`,
        'REDIS_MISSING',
      );
    }
  }
  const found = which(pkg);
  if (found) return found;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const hasApt = spawnSync('sh', ['-c', 'command -v apt-get'], { stdio: 'ignore' }).status === 0;
  if (!isRoot || !hasApt) throw new ClusterConfigError(pkg.hint, 'REDIS_MISSING');
  log(`${pkg.binary} is missing; installing Debian's ${pkg.debianPackage} with apt-get (running as root)…`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const update = spawnSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
  const install =
    update.status === 0
      ? spawnSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', pkg.debianPackage], { stdio: 'inherit', env })
      : update;
  const installed = which(pkg);
  if (install.status !== 0 || !installed) {
    throw new ClusterConfigError(`apt-get could not install ${pkg.debianPackage}; ${pkg.hint}`, 'REDIS_MISSING');
  }
  return installed;
}
