/**
 * `npm start` / `npm run dev`: the whole product in one command.
 *
 * This process is the supervisor: it runs the local masters and their fault proxies (unless
 * REDLOCK_NODES names external masters), serves the control channel on 127.0.0.1, and runs the
 * Next.js console and the lock service (the data plane) as children. Keeping the redis-server
 * processes here, not in the Next.js server,
 * means a `next dev` hot reload or a crashed route never orphans or restarts a node; the console
 * reaches the supervisor through the control channel (see lib/cluster/control-protocol.ts).
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  CONTROL_ENV,
  ClusterSupervisor,
  continuityLines,
  ensureSecretFile,
  startControlServer,
  startScenarioSandbox,
  type ContinuityOutcome,
  type ControlServer,
  type ScenarioSandbox,
} from '../lib/cluster';
import { ConfigError, ensureOperatorLogin, loadConfig, redact } from '../lib/config';
import { lockServiceConfig, trustForOwnService } from '../lib/config/lock-service';
import { connectionLimits } from '../lib/server/http/connection-limits';
import { quotaSettings } from '../lib/server/quotas/settings';
import { appRoot } from './support/app-root';
import { ensureBuild } from './support/build-state';
import { installProcessGuards } from './support/process-guards';
import { describeFatal } from './support/fatal';
import { nextBinary, spawnConsoleServer, spawnLockService, waitForHealth } from './support/next-process';
import { ensureSystemPackage, REDIS_SERVER } from './support/system-packages';

const root = appRoot(import.meta.url);
const dev = process.argv.includes('--dev');
const log = (line: string) => console.log(`[redlock-console] ${line}`);

let supervisor: ClusterSupervisor | null = null;
let control: ControlServer | null = null;
let sandbox: ScenarioSandbox | null = null;
/** The sandbox's start while it runs (a failure elsewhere waits for it, then stops it). */
let sandboxPending: Promise<unknown> | null = null;
let next: ReturnType<typeof spawnConsoleServer> | null = null;
let service: ReturnType<typeof spawnLockService> | null = null;
/** How often a lock service that dies is started again within a minute before `npm start` gives up. */
const RESTARTS_PER_MINUTE = 3;
let stopping = false;

async function main(): Promise<void> {
  const config = loadConfig(process.env, root);
  // The console server reads its connection caps and API-key quotas itself; a bad one stops here, in one line.
  connectionLimits(process.env);
  quotaSettings(process.env.REDLOCK_API_KEY_QUOTAS);
  const serviceConfig = lockServiceConfig(process.env, config.port);
  const login = ensureOperatorLogin(config.dataDir, { user: config.adminUser, password: config.adminPassword });
  const env: Record<string, string> = {
    REDLOCK_DATA_DIR: config.dataDir,
    REDLOCK_KEY_PREFIX: config.keyPrefix,
    REDLOCK_MAX_TTL_MS: String(config.maxTtlMs),
  };

  const image = !!process.env.REDLOCK_SERVER_BUNDLE;
  if (image && process.env.REDLOCK_SANDBOX?.trim() === 'local') {
    throw new ConfigError('REDLOCK_SANDBOX=local: the image runs no redis-server of its own; leave it unset (scenarios are then off)');
  }
  // The teaching sandbox starts beside the main masters (lib/cluster/sandbox.ts): scenarios run there only.
  const sandboxStarted =
    config.sandbox === 'local' && !image
      ? startScenarioSandbox({
          dataDir: config.dataDir,
          binary: ensureSystemPackage(REDIS_SERVER, log),
          keyPrefix: config.keyPrefix,
          maxTtlMs: config.maxTtlMs,
          portBase: config.sandboxPortBase,
        }).then((s) => (sandbox = s))
      : null;
  // Stop here on its failure too, once both starts have settled (never a sandbox left running unseen).
  const sandboxReady = sandboxStarted?.catch((err: unknown) => err as Error) ?? Promise.resolve(null);
  sandboxPending = sandboxReady;

  if (config.nodes) {
    env.REDLOCK_MODE = 'external';
    env.REDLOCK_NODES = config.nodes.map((n) => n.url).join(',');
    log(`using ${config.nodes.length} external masters: ${config.nodes.map((n) => redact(n.url)).join(', ')}`);
  } else if (process.env.REDLOCK_SERVER_BUNDLE) {
    // The image runs no redis-server of its own (and could not install one on its read-only root).
    throw new ConfigError('set REDLOCK_NODES to the masters (redis://:password@host:port,…): the image runs no local cluster');
  } else {
    const binary = ensureSystemPackage(REDIS_SERVER, log);
    supervisor = await ClusterSupervisor.start({
      dataRoot: join(config.dataDir, 'cluster'),
      nodes: config.clusterSize,
      portBase: config.serverPortBase,
      proxyPortBase: config.portBase,
      persistence: config.persistence,
      binary,
      keyPrefix: config.keyPrefix,
      maxTtlMs: config.maxTtlMs,
    });
    supervisor.on('node-down', (id: number, exit: { expected: boolean; signal: string | null; code: number | null }) => {
      if (!exit.expected && !stopping) log(`node ${id} exited unexpectedly (${exit.signal ?? `code ${exit.code}`})`);
    });
    for (const line of continuityLines(supervisor.nodes())) log(line);
    supervisor.on('continuity', (id: number, outcome: ContinuityOutcome) => log(`node ${id}: restart ${outcome.reason}`));
    const secretFile = join(config.dataDir, 'control.secret');
    control = await startControlServer(supervisor, ensureSecretFile(secretFile));
    writeFileSync(join(config.dataDir, 'control.json'), JSON.stringify({ url: control.url, secretFile, pid: process.pid }), {
      mode: 0o600,
    });
    env.REDLOCK_MODE = 'sandbox';
    env.REDLOCK_NODES = supervisor.urls().join(',');
    env[CONTROL_ENV.url] = control.url;
    env[CONTROL_ENV.secretFile] = secretFile;
    log(
      `started ${supervisor.size} local masters (persistence ${config.persistence}, password in ${join(config.dataDir, 'cluster', 'redis.secret')}): ${supervisor
        .urls()
        .map(redact)
        .join(' ')}`,
    );
  }

  const sandboxResult = await sandboxReady;
  if (sandboxResult instanceof Error) throw sandboxResult;
  if (sandbox) {
    Object.assign(env, sandbox.env);
    log(
      `started the teaching sandbox: ${sandbox.supervisor.size} masters of its own for the scenarios (${sandbox.supervisor.urls().map(redact).join(' ')})`,
    );
  } else {
    log('scenarios are off: no teaching sandbox (REDLOCK_SANDBOX=off, the default with REDLOCK_NODES)');
  }

  // The lock service (the data plane) first, on its own port: the console forwards the lock routes
  // to it. With REDLOCK_LOCK_SERVICE_URL given (replicas behind a load balancer: docker-compose.yml)
  // the console forwards there and no service process starts here.
  const serviceHost = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  const serviceUrl = process.env.REDLOCK_LOCK_SERVICE_URL?.trim() || `http://${serviceHost}:${serviceConfig.port}`;
  if (!process.env.REDLOCK_LOCK_SERVICE_URL?.trim()) {
    // It keeps no state of its own: one that dies is started again (the console meanwhile answers
    // the lock routes 503), up to RESTARTS_PER_MINUTE; past that, something is wrong and all stops.
    const restarts: number[] = [];
    const run = (): ReturnType<typeof spawnLockService> => {
      const child = (service = spawnLockService({
        cwd: root,
        port: serviceConfig.port,
        host: config.host,
        env: {
          ...env,
          REDLOCK_DRAIN_MS: String(serviceConfig.drainMs),
          REDLOCK_TRUST_PROXY: trustForOwnService(serviceHost),
        },
      }));
      child.once('exit', (code, signal) => {
        if (stopping) return;
        const now = Date.now();
        while (restarts.length && now - restarts[0]! > 60_000) restarts.shift();
        if (restarts.length >= RESTARTS_PER_MINUTE) {
          log(
            `the lock service exited (${signal ?? `code ${code}`}) ${RESTARTS_PER_MINUTE + 1} times within a minute; stopping the cluster`,
          );
          return void guards.stop(code ?? 1);
        }
        restarts.push(now);
        log(`the lock service exited (${signal ?? `code ${code}`}); starting it again`);
        run();
      });
      return child;
    };
    await waitForHealth(serviceUrl, run(), 60_000);
  }
  env.REDLOCK_LOCK_SERVICE_URL = serviceUrl;

  if (!dev) ensureBuild(root, nextBinary, log);
  next = spawnConsoleServer(dev ? 'dev' : 'start', { cwd: root, port: config.port, host: config.host, env });
  next.once('exit', (code, signal) => {
    if (stopping) return;
    log(`the console server exited (${signal ?? `code ${code}`}); stopping the cluster`);
    void guards.stop(code ?? 1);
  });
  const shownHost = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  const url = `http://${shownHost}:${config.port}`;
  await waitForHealth(url, next, dev ? 180_000 : 60_000);
  console.log('');
  console.log(`  redlock-console is ready${dev ? ' (dev)' : ''}`);
  console.log(`    console   ${url}`);
  console.log(`    locks     ${serviceUrl}   (the lock service: POST /api/locks with an API key; the console forwards there too)`);
  // The password is printed once, when it is generated: start logs are often kept and shared.
  console.log(
    login.source === 'env'
      ? `    login     ${login.username} / (the password in REDLOCK_ADMIN_PASSWORD)`
      : login.created
        ? `    login     ${login.username} / ${login.password}   (generated now; kept in ${join(config.dataDir, 'operator.json')}, printed only this once)`
        : `    login     ${login.username} / (the password in ${join(config.dataDir, 'operator.json')})`,
  );
  console.log(`    masters   ${env.REDLOCK_MODE === 'sandbox' ? `${supervisor?.size} local` : 'external'}`);
  console.log(
    `    scenarios ${sandbox ? `on the teaching sandbox (${sandbox.supervisor.size} masters of their own)` : 'off (no teaching sandbox)'}`,
  );
  console.log('    Ctrl-C stops everything.');
  console.log('');
}

const guards = installProcessGuards(
  {
    async shutdown() {
      stopping = true;
      // The console first (its forwarded requests are answered by the service meanwhile), then the
      // lock service (its own clients' requests in flight), each given its drain; then the masters.
      const drainMs = lockServiceConfig(process.env, 3_000).drainMs;
      await terminate(next, 5_000);
      await terminate(service, drainMs + 1_500);
      await control?.close().catch(() => undefined);
      if (control) rmSync(join(loadConfig(process.env, root).dataDir, 'control.json'), { force: true });
      await supervisor?.shutdown().catch(() => undefined);
      await sandbox?.close();
    },
    killSync() {
      supervisor?.killAllSync();
      sandbox?.supervisor.killAllSync();
      next?.kill('SIGKILL');
      service?.kill('SIGKILL');
    },
  },
  log,
);

/** SIGTERM a child server and wait for its exit (SIGKILL after `killAfterMs`: longer than its drain). */
async function terminate(child: ReturnType<typeof spawnConsoleServer> | null, killAfterMs: number): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
  await exited;
  clearTimeout(timer);
}

main().catch(async (err: unknown) => {
  console.error(describeFatal(err));
  stopping = true;
  next?.kill('SIGKILL');
  service?.kill('SIGKILL');
  await control?.close().catch(() => undefined);
  await supervisor?.shutdown().catch(() => undefined);
  await sandboxPending;
  await sandbox?.close();
  process.exit(1);
});
