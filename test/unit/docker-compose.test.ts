import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseNodeUrls } from '../../lib/config';
import { hasNotifyFlags } from '../../lib/inspect/notifications';

// No Docker engine runs here, so the file is checked for exactly what the product promises.
interface Service {
  image?: string;
  build?: unknown;
  command?: string[];
  ports?: string[];
  healthcheck?: { test: string[] };
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  read_only?: boolean;
  tmpfs?: string[];
  volumes?: string[];
}
/** The one secret of the file, required from the environment (compose's `${VAR:?message}`). */
const PASSWORD = /^\$\{REDLOCK_REDIS_PASSWORD:\?[^}]+\}$/;
const compose = parse(readFileSync('docker-compose.yml', 'utf8'), { merge: true }) as { services: Record<string, Service> };
const masters = Object.entries(compose.services).filter(([, s]) => s.image?.startsWith('redis:'));

describe('docker-compose.yml', () => {
  it('runs five independent redis:7 masters, fsync always, no replication, no cluster mode', () => {
    expect(masters.map(([name]) => name)).toEqual(['redis-1', 'redis-2', 'redis-3', 'redis-4', 'redis-5']);
    for (const [, service] of masters) {
      expect(service.image).toBe('redis:7');
      const args = service.command!.join(' ');
      expect(args).toContain('--appendonly yes');
      expect(args).toContain('--appendfsync always');
      // The console does not configure nodes it does not run: the live index and events need these.
      // (Compose interpolates `$name` in values: a literal `$` is written `$$`.)
      const flags = service.command![service.command!.indexOf('--notify-keyspace-events') + 1] ?? '';
      expect(flags.replace(/\$\$/g, '')).not.toContain('$');
      expect(hasNotifyFlags(flags.replace(/\$\$/g, '$'))).toBe(true);
      expect(args).not.toMatch(/replicaof|slaveof|cluster-enabled/);
      expect(args).toContain('--maxmemory-policy noeviction');
      // No password-less master: the password is required from the environment, never written here.
      expect(service.command![service.command!.indexOf('--requirepass') + 1]).toMatch(PASSWORD);
      // The healthcheck authenticates through redis-cli's REDISCLI_AUTH.
      expect(service.healthcheck?.test).toEqual(['CMD', 'redis-cli', 'ping']);
      expect(service.environment?.REDISCLI_AUTH).toBe('${REDLOCK_REDIS_PASSWORD}');
    }
    expect(readFileSync('docker-compose.yml', 'utf8')).not.toMatch(/replicaof|slaveof/);
  });

  it('publishes each master on its own host port, on 127.0.0.1 only, and the console too', () => {
    expect(masters.map(([, s]) => s.ports)).toEqual([1, 2, 3, 4, 5].map((i) => [`127.0.0.1:638${i}:6379`]));
    expect(compose.services.console!.ports).toEqual(['127.0.0.1:3000:3000']);
    // Nothing anywhere is published on every interface.
    for (const service of Object.values(compose.services)) for (const port of service.ports ?? []) expect(port).toMatch(/^127\.0\.0\.1:/);
  });

  it('builds the console from the Dockerfile and points REDLOCK_NODES at exactly the five masters', () => {
    const consoleService = compose.services.console!;
    expect(consoleService.build).toBe('.');
    const raw = consoleService.environment!.REDLOCK_NODES!;
    // Every URL carries the masters' password (compose fills it in from the environment).
    expect(raw.split(',').every((url) => url.startsWith('redis://:${REDLOCK_REDIS_PASSWORD}@'))).toBe(true);
    const nodes = parseNodeUrls(raw.replaceAll('${REDLOCK_REDIS_PASSWORD}', 'a1b2c3'));
    expect(nodes.map((n) => n.label)).toEqual(masters.map(([name]) => `${name}:6379`));
    expect(nodes.every((n) => !n.label.includes('a1b2c3'))).toBe(true);
    expect(consoleService.environment!.HOST).toBe('0.0.0.0');
    for (const [name] of masters) expect(consoleService.depends_on?.[name]?.condition).toBe('service_healthy');
    // The image's shape is test/unit/dockerfile.test.ts's.
  });

  it('runs the console on a read-only root filesystem, writing only its data volume and /tmp', () => {
    const consoleService = compose.services.console!;
    expect(consoleService.read_only).toBe(true);
    expect(consoleService.tmpfs).toEqual(['/tmp']);
    expect(consoleService.volumes).toEqual(['console-data:/data']);
  });
});
