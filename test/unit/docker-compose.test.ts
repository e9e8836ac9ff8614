import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { freePort } from '../../lib/cluster/ports';
import { parseNodeUrls } from '../../lib/config';
import { hasNotifyFlags } from '../../lib/inspect/notifications';
import { HAPROXY_CONFIG } from '../support/haproxy';
import { findPromtool } from '../support/promtool';
import { HAPROXY, which } from '../../scripts/support/system-packages';

// No Docker engine runs here, so the file is checked for exactly what the product promises, and
// the pieces it mounts are run for real: the masters' redis.conf on redis-server, the secrets
// script, Prometheus's configuration under promtool.
interface Service {
  image?: string;
  build?: unknown;
  entrypoint?: string[];
  command?: string[];
  ports?: string[];
  healthcheck?: { test: string[] };
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  read_only?: boolean;
  tmpfs?: string[];
  volumes?: string[];
  secrets?: string[];
  stop_grace_period?: string;
  networks?: Record<string, { ipv4_address?: string }>;
}
/** The balancer's fixed address on the compose network (the one trusted proxy). */
const LB_ADDRESS = '172.28.0.10';
const root = join(import.meta.dirname, '..', '..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');
const text = read('docker-compose.yml');
const compose = parse(text, { merge: true }) as {
  services: Record<string, Service>;
  secrets: Record<string, { file: string }>;
  volumes: Record<string, unknown>;
};
const masters = Object.entries(compose.services).filter(([, s]) => s.image?.startsWith('redis:'));
const redisConf = read('deploy/redis/redis.conf');
const consoleEnv = read('deploy/compose/console-env.sh');
const prometheusYml = parse(read('deploy/prometheus/prometheus.yml')) as {
  global: { external_labels: Record<string, string> };
  rule_files: string[];
  scrape_configs: Array<{
    job_name: string;
    metrics_path: string;
    authorization: { credentials_file: string };
    static_configs: Array<{ targets: string[] }>;
  }>;
};
/** Where a service mounts a file of the repository (`./path:/in/container[:ro]`), by container path. */
const mounts = (service: Service) =>
  new Map(
    (service.volumes ?? [])
      .filter((v) => v.startsWith('./'))
      .map((v) => {
        const [from, to, mode] = v.split(':');
        return [to!, { from: from!.slice(2), mode }];
      }),
  );
const tmp = mkdtempSync(join(tmpdir(), 'redlock-compose-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('docker-compose.yml', () => {
  it('takes every secret from a file, and none from a command line or an environment `docker inspect` shows', () => {
    expect(compose.secrets).toEqual({
      redis_password: { file: './secrets/redis-password' },
      api_key: { file: './secrets/api-key' },
      metrics_token: { file: './secrets/metrics-token' },
      session_secret: { file: './secrets/session-secret' },
      admin_password: { file: './secrets/admin-password' },
    });
    // No value of the file names a secret: no --requirepass, no password variable, no token.
    expect(text).not.toMatch(/requirepass|REDLOCK_REDIS_PASSWORD|REDISCLI_AUTH: |REDLOCK_NODES:|REDLOCK_API_KEYS:|REDLOCK_METRICS_TOKEN:/);
    for (const [name, service] of Object.entries(compose.services)) {
      const shown = [...(service.command ?? []), ...(service.entrypoint ?? []), ...Object.values(service.environment ?? {})].join(' ');
      expect(shown, name).not.toMatch(/password|secret|token|key/i);
    }
    // The secrets are not in the image's build context either.
    expect(read('.dockerignore')).toMatch(/^secrets$/m);
    expect(read('.gitignore')).toMatch(/^\/secrets\/$/m);
  });

  it('runs five independent masters on a pinned Redis, their password read from the secret into an included config file', () => {
    expect(masters.map(([name]) => name)).toEqual(['redis-1', 'redis-2', 'redis-3', 'redis-4', 'redis-5']);
    for (const [name, service] of masters) {
      expect(service.image, name).toBe('redis:7.0.15');
      expect(service.secrets).toEqual(['redis_password']);
      expect(service.entrypoint).toEqual(['sh', '/usr/local/etc/redis/start.sh']);
      expect(service.command).toBeUndefined();
      expect(service.tmpfs).toEqual(['/run/redis-auth']);
      const files = mounts(service);
      expect(files.get('/usr/local/etc/redis/redis.conf')).toEqual({ from: 'deploy/redis/redis.conf', mode: 'ro' });
      expect(files.get('/usr/local/etc/redis/start.sh')).toEqual({ from: 'deploy/redis/start.sh', mode: 'ro' });
      expect(service.volumes).toContain(`${name}:/data`);
      // The healthcheck authenticates through redis-cli's environment, read from the secret file.
      expect(service.healthcheck?.test[0]).toBe('CMD-SHELL');
      expect(service.healthcheck?.test[1]).toContain('REDISCLI_AUTH="$$(cat /run/secrets/redis_password)" redis-cli ping');
    }
    const start = read('deploy/redis/start.sh');
    expect(start).toContain('password=$(cat /run/secrets/redis_password)');
    expect(start).toContain(`printf 'requirepass "%s"\\n' "$password" > /run/redis-auth/auth.conf`);
    expect(start).toMatch(/^exec docker-entrypoint\.sh redis-server \/usr\/local\/etc\/redis\/redis\.conf$/m);
    expect(redisConf).toMatch(/^include \/run\/redis-auth\/auth\.conf$/m);
    expect(redisConf).not.toMatch(/replicaof|slaveof|cluster-enabled|requirepass/);
  });

  it("the masters' redis.conf, on a real redis-server: fsync always, no eviction, notifications, the password from the file only", async () => {
    const password = 'a1b2c3d4'.repeat(6);
    writeFileSync(join(tmp, 'auth.conf'), `requirepass "${password}"\n`);
    const port = await freePort();
    const conf = join(tmp, 'redis.conf');
    writeFileSync(
      conf,
      redisConf.replace('include /run/redis-auth/auth.conf', `include ${join(tmp, 'auth.conf')}`).replace('dir /data', `dir ${tmp}`) +
        `\nport ${port}\nbind 127.0.0.1\n`,
    );
    const server = spawn('redis-server', [conf], { stdio: 'ignore' });
    const client = new Redis({ port, password, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    client.on('error', () => undefined); // refused until redis-server listens: retried below
    try {
      const deadline = Date.now() + 15_000;
      for (;;) {
        try {
          await client.connect();
          break;
        } catch (err) {
          if (Date.now() > deadline) throw err;
          // poll: until the node accepts a connection
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      const config = async (name: string) => ((await client.config('GET', name)) as string[])[1] ?? '';
      expect(await config('appendonly')).toBe('yes');
      expect(await config('appendfsync')).toBe('always');
      expect(await config('maxmemory-policy')).toBe('noeviction');
      expect(hasNotifyFlags(await config('notify-keyspace-events'))).toBe(true);
      expect(await client.info('replication')).toContain('role:master');
      expect(await config('cluster-enabled')).toBe('no');
      // Without the password, nothing; and the password is on no command line.
      const anonymous = new Redis({ port, lazyConnect: true, enableReadyCheck: false, maxRetriesPerRequest: 0, retryStrategy: () => null });
      anonymous.on('error', () => undefined);
      await anonymous.connect();
      await expect(anonymous.ping()).rejects.toThrow(/NOAUTH/);
      anonymous.disconnect();
      expect(readFileSync(`/proc/${server.pid}/cmdline`, 'utf8')).not.toContain(password);
    } finally {
      client.disconnect();
      server.kill('SIGKILL');
    }
  }, 30_000);

  it('runs two lock-service replicas and two consoles from the image, each with the masters, keys, session secret and operator password from the secrets', () => {
    const apps = Object.entries(compose.services).filter(([, s]) => s.build);
    expect(apps.map(([name]) => name).sort()).toEqual(['console-1', 'console-2', 'lock-service-1', 'lock-service-2']);
    for (const [name, service] of apps) {
      expect(service.secrets, name).toEqual(['redis_password', 'api_key', 'metrics_token', 'session_secret', 'admin_password']);
      expect(service.entrypoint).toEqual(['sh', '/etc/redlock/console-env.sh']);
      expect(mounts(service).get('/etc/redlock/console-env.sh')).toEqual({ from: 'deploy/compose/console-env.sh', mode: 'ro' });
      expect(service.environment?.REDLOCK_INSTANCE, name).toBe(name);
      expect(service.environment?.HOST).toBe('0.0.0.0');
      // The balancer is the one proxy whose X-Forwarded-For is believed.
      expect(service.environment?.REDLOCK_TRUST_PROXY).toBe(LB_ADDRESS);
      for (const [master] of masters) expect(service.depends_on?.[master]?.condition).toBe('service_healthy');
    }
    for (const name of ['lock-service-1', 'lock-service-2']) {
      const service = compose.services[name]!;
      expect(service.command).toEqual(['node', 'dist/server/lock-service-server.mjs']);
      expect(service.environment?.PORT).toBe('3001');
      // Longer than the drain (REDLOCK_DRAIN_MS, 3.5 s): a stop lets the requests in flight finish.
      expect(parseFloat(service.stop_grace_period ?? '0')).toBeGreaterThanOrEqual(5);
    }
    for (const name of ['console-1', 'console-2']) {
      const service = compose.services[name]!;
      expect(service.command).toEqual(['node', 'dist/server/start.mjs']);
      expect(service.environment?.PORT).toBe('3000');
      // The lock routes go to the lock service, through the balancer (never answered by a console).
      expect(service.environment?.REDLOCK_LOCK_SERVICE_URL).toBe('http://lb:3001');
    }
    // What the script exports, run with secrets like the ones secrets.sh writes.
    const secrets = join(tmp, 'run-secrets');
    spawnSync('mkdir', ['-p', secrets]);
    writeFileSync(join(secrets, 'redis_password'), 'f00d'.repeat(12));
    writeFileSync(join(secrets, 'api_key'), 'k3y0'.repeat(12));
    writeFileSync(join(secrets, 'metrics_token'), 't0k3'.repeat(12));
    writeFileSync(join(secrets, 'session_secret'), '5e55'.repeat(12));
    writeFileSync(join(secrets, 'admin_password'), 'ad41'.repeat(12));
    const script = join(tmp, 'console-env.sh');
    writeFileSync(script, consoleEnv.replaceAll('/run/secrets/', `${secrets}/`));
    const run = spawnSync('sh', [script, 'env'], { encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    const env = Object.fromEntries(run.stdout.split('\n').map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
    const nodes = parseNodeUrls(env.REDLOCK_NODES!);
    expect(nodes.map((n) => n.label)).toEqual(masters.map(([name]) => `${name}:6379`));
    expect(env.REDLOCK_NODES!.split(',').every((url) => url.startsWith(`redis://:${'f00d'.repeat(12)}@`))).toBe(true);
    expect(env.REDLOCK_API_KEYS).toBe(`compose=${'k3y0'.repeat(12)}`);
    expect(env.REDLOCK_METRICS_TOKEN).toBe('t0k3'.repeat(12));
    expect(env.REDLOCK_SESSION_SECRET).toBe('5e55'.repeat(12));
    expect(env.REDLOCK_ADMIN_PASSWORD).toBe('ad41'.repeat(12));
    // An empty secret stops the start with one line saying what to run.
    writeFileSync(join(secrets, 'api_key'), '');
    const empty = spawnSync('sh', [script, 'env'], { encoding: 'utf8' });
    expect(empty.status).not.toBe(0);
    expect(empty.stderr.trim()).toBe('the api_key secret is empty: run sh deploy/compose/secrets.sh');
  });

  it('puts HAProxy in front of both planes, on its fixed address, with every address its configuration reads, accepted by the real haproxy', () => {
    const lb = compose.services.lb!;
    expect(lb.image).toMatch(/^haproxy:\d+\.\d+\.\d+$/);
    expect(mounts(lb).get('/usr/local/etc/haproxy/haproxy.cfg')).toEqual({ from: HAPROXY_CONFIG, mode: 'ro' });
    expect(lb.networks?.default?.ipv4_address).toBe(LB_ADDRESS);
    const config = read(HAPROXY_CONFIG);
    const wanted = [...new Set([...config.matchAll(/"\$\{(\w+)\}"/g)].map((m) => m[1]!))].sort();
    expect(Object.keys(lb.environment ?? {}).sort()).toEqual(wanted);
    // Its servers are the replicas compose runs, on their ports.
    expect(lb.environment).toMatchObject({
      CONSOLE_1: 'console-1:3000',
      CONSOLE_2: 'console-2:3000',
      LOCK_SERVICE_1: 'lock-service-1:3001',
      LOCK_SERVICE_2: 'lock-service-2:3001',
    });
    // The lock service is checked on readiness (a quorum, not draining), the consoles on liveness.
    expect(config).toMatch(/backend lock_services[\s\S]*?option httpchk GET \/api\/ready/);
    expect(config).toMatch(/backend consoles[\s\S]*?option httpchk GET \/api\/health/);
    // The compose network's names do not resolve here: haproxy -c accepts them as servers resolved at run time.
    const check = spawnSync(which(HAPROXY) ?? 'haproxy', ['-c', '-f', join(root, HAPROXY_CONFIG)], {
      encoding: 'utf8',
      env: { ...process.env, ...lb.environment },
    });
    expect(check.status, check.stdout + check.stderr).toBe(0);
    expect(check.stdout + check.stderr).toMatch(/Configuration file is valid/);
  });

  it('runs a pinned Prometheus that scrapes the console with the metrics token and loads the alert rules', () => {
    const prometheus = compose.services.prometheus!;
    expect(prometheus.image).toMatch(/^prom\/prometheus:v\d+\.\d+\.\d+$/);
    expect(prometheus.secrets).toEqual(['metrics_token']);
    const files = mounts(prometheus);
    expect(files.get('/etc/prometheus/prometheus.yml')).toEqual({ from: 'deploy/prometheus/prometheus.yml', mode: 'ro' });
    expect(files.get('/etc/prometheus/alerts.yml')).toEqual({ from: 'deploy/prometheus/alerts.yml', mode: 'ro' });
    expect(prometheusYml.rule_files).toEqual(['/etc/prometheus/alerts.yml']);
    expect(prometheusYml.scrape_configs).toEqual([
      {
        job_name: 'redlock-console', // RedlockConsoleDown's job
        metrics_path: '/api/metrics',
        authorization: { credentials_file: '/run/secrets/metrics_token' },
        static_configs: [{ targets: ['console-1:3000', 'console-2:3000'] }],
      },
      {
        job_name: 'redlock-lock-service',
        metrics_path: '/api/metrics',
        authorization: { credentials_file: '/run/secrets/metrics_token' },
        static_configs: [{ targets: ['lock-service-1:3001', 'lock-service-2:3001'] }],
      },
    ]);
    expect(prometheusYml.global.external_labels.runbook_base).toBe('${REDLOCK_RUNBOOK_BASE}');
    expect(prometheus.environment?.REDLOCK_RUNBOOK_BASE).toBe('${REDLOCK_RUNBOOK_BASE:-}');
    const check = spawnSync(findPromtool(), ['check', 'config', '--syntax-only', join(root, 'deploy/prometheus/prometheus.yml')], {
      encoding: 'utf8',
    });
    expect(check.status, check.stdout + check.stderr).toBe(0);
  });

  it('pins every image to an exact version, and publishes everything on 127.0.0.1 only', () => {
    for (const [name, service] of Object.entries(compose.services)) {
      if (service.build) continue;
      expect(service.image, name).toMatch(/^[\w./-]+:v?\d+\.\d+\.\d+(@sha256:[0-9a-f]{64})?$/);
    }
    expect(masters.map(([, s]) => s.ports)).toEqual([1, 2, 3, 4, 5].map((i) => [`127.0.0.1:638${i}:6379`]));
    // The consoles and the lock service are reached through the balancer only.
    expect(compose.services.lb!.ports).toEqual(['127.0.0.1:3000:3000', '127.0.0.1:3001:3001']);
    for (const name of ['console-1', 'console-2', 'lock-service-1', 'lock-service-2'])
      expect(compose.services[name]!.ports, name).toBeUndefined();
    expect(compose.services.prometheus!.ports).toEqual(['127.0.0.1:9090:9090']);
    for (const service of Object.values(compose.services)) for (const port of service.ports ?? []) expect(port).toMatch(/^127\.0\.0\.1:/);
  });

  it('runs the consoles and lock services on a read-only root filesystem, writing only their own data volume and /tmp', () => {
    for (const name of ['console-1', 'console-2', 'lock-service-1', 'lock-service-2']) {
      const service = compose.services[name]!;
      expect(service.read_only, name).toBe(true);
      expect(service.tmpfs).toEqual(['/tmp']);
      expect(service.volumes?.filter((v) => !v.startsWith('./'))).toEqual(name.startsWith('console') ? [`${name}-data:/data`] : []);
    }
  });
});

describe('deploy/compose/secrets.sh', () => {
  it('writes each secret once: 48 hex characters, in a directory only its owner can open', () => {
    const dir = join(tmp, 'secrets');
    const run = () => spawnSync('sh', [join(root, 'deploy/compose/secrets.sh'), dir], { encoding: 'utf8' });
    expect(run().status).toBe(0);
    const names = ['redis-password', 'api-key', 'metrics-token', 'session-secret', 'admin-password'];
    const first = names.map((n) => readFileSync(join(dir, n), 'utf8'));
    for (const value of first) expect(value).toMatch(/^[0-9a-f]{48}$/);
    expect(new Set(first).size).toBe(names.length);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    // Again: nothing changes (a restart keeps its keys).
    const again = run();
    expect(again.stdout).toBe('');
    expect(names.map((n) => readFileSync(join(dir, n), 'utf8'))).toEqual(first);
  });
});
