import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseNodeUrls } from '../../lib/config';
import { hasNotifyFlags } from '../../lib/inspect/notifications';

// No Docker engine runs here, so the file is checked for exactly what the product promises.
interface Service { image?: string; build?: unknown; command?: string[]; ports?: string[]; healthcheck?: { test: string[] };
  environment?: Record<string, string>; depends_on?: Record<string, { condition: string }> }
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
      expect(service.healthcheck?.test).toEqual(['CMD', 'redis-cli', 'ping']);
    }
    expect(readFileSync('docker-compose.yml', 'utf8')).not.toMatch(/replicaof|slaveof/);
  });

  it('publishes each master on its own host port', () => {
    const hostPorts = masters.map(([, s]) => s.ports![0]!.split(':')[0]);
    expect(hostPorts).toEqual(['6381', '6382', '6383', '6384', '6385']);
    expect(masters.every(([, s]) => s.ports![0]!.endsWith(':6379'))).toBe(true);
  });

  it('builds the console from the Dockerfile and points REDLOCK_NODES at exactly the five masters', () => {
    const consoleService = compose.services.console!;
    expect(consoleService.build).toBe('.');
    const nodes = parseNodeUrls(consoleService.environment!.REDLOCK_NODES!);
    expect(nodes.map((n) => n.label)).toEqual(masters.map(([name]) => `${name}:6379`));
    expect(consoleService.environment!.HOST).toBe('0.0.0.0');
    for (const [name] of masters) expect(consoleService.depends_on?.[name]?.condition).toBe('service_healthy');
    const dockerfile = readFileSync('Dockerfile', 'utf8');
    expect(dockerfile).toMatch(/CMD \["node", "--import", "tsx", "scripts\/start.ts"\]/);
    expect(dockerfile).toContain('scripts/build.ts');
  });
});
