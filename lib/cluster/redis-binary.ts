import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';

const execFileP = promisify(execFile);

/** Absolute path of `redis-server` (REDIS_SERVER overrides), or null when it is not installed. */
export function findRedisServer(env: NodeJS.ProcessEnv = process.env): string | null {
  const candidates = env.REDIS_SERVER
    ? [env.REDIS_SERVER]
    : [
        ...(env.PATH ?? '')
          .split(delimiter)
          .filter(Boolean)
          .map((dir) => join(dir, 'redis-server')),
        '/usr/bin/redis-server',
        '/usr/local/bin/redis-server',
        '/usr/sbin/redis-server',
      ];
  for (const file of candidates) {
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return null;
}

/** "7.0.15" from `redis-server --version`. */
export async function redisServerVersion(binary: string): Promise<string> {
  const { stdout } = await execFileP(binary, ['--version'], { timeout: 5_000 });
  return /v=(\S+)/.exec(stdout)?.[1] ?? stdout.trim();
}

export const REDIS_MISSING_HINT =
  'redis-server was not found. Install it (Debian/Ubuntu: sudo apt-get install redis-server; ' +
  'macOS: brew install redis), set REDIS_SERVER=/path/to/redis-server, or run the masters with ' +
  '`docker compose up` and point REDLOCK_NODES at them.';
