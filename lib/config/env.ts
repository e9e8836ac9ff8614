import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { DEFAULT_SETTINGS } from '@redlock-console/redlock';
import { isPersistence, type Persistence } from '../cluster/persistence';
import { ConfigError } from './errors';
import { parseNodeUrls, type NodeEndpoint } from './node-urls';
import { parseTrustProxy, type TrustProxy } from './trust-proxy';
import { READING_MS } from '../scenarios/flow';

/**
 * Every setting of redlock-console, read from the environment. Each entry documents its variable
 * and default; README.md's configuration table is written from this list.
 */
export interface Config {
  /** PORT: HTTP port of the console. @default 3000 */
  port: number;
  /** HOST: interface the console listens on. @default 127.0.0.1 (use 0.0.0.0 in containers) */
  host: string;
  /** REDLOCK_DATA_DIR: local state (cluster data, secrets, credentials). @default ./.data */
  dataDir: string;
  /** REDLOCK_NODES: external masters; when set, no local cluster is started. @default unset */
  nodes: NodeEndpoint[] | null;
  /** REDLOCK_CLUSTER_SIZE: number of local masters. @default 5 */
  clusterSize: number;
  /** REDLOCK_PORT_BASE: first client-facing port (each local node's fault proxy). @default 6381 */
  portBase: number;
  /** REDLOCK_SERVER_PORT_BASE: first redis-server port behind the proxies. @default 16381 */
  serverPortBase: number;
  /** REDLOCK_PERSISTENCE: none | rdb | aof-everysec | aof-always for local masters. @default aof-always */
  persistence: Persistence;
  /** REDLOCK_KEY_PREFIX: prefix of every key the lock core writes. @default rl: */
  keyPrefix: string;
  /** REDLOCK_MAX_TTL_MS: lease ceiling, also the quarantine length. @default 60000 */
  maxTtlMs: number;
  /**
   * REDLOCK_NODE_TIMEOUT_MS: how long the lock service waits for one master's answer in a round
   * (the core's nodeTimeoutMs): masters in another zone or region need more than the default. Only
   * latency and availability move with it: a grant's validity is still counted from before its first
   * request. @default 100
   */
  nodeTimeoutMs: number;
  /** REDLOCK_ADMIN_USER / REDLOCK_ADMIN_PASSWORD: the operator login; generated on first run when unset. */
  adminUser: string | null;
  adminPassword: string | null;
  /**
   * REDLOCK_TRUST_PROXY: whether X-Forwarded-For names the client (login limits, audit): off (the
   * TCP peer's address), a hop count, or a list of the proxies' CIDR ranges. @default off
   */
  trustProxy: TrustProxy;
  /** LOG_LEVEL: pino level. @default info */
  logLevel: string;
  /**
   * REDLOCK_SANDBOX: local | off. `local`: `npm start` also starts the teaching sandbox, five
   * masters of their own (own ports, proxies and data dirs) that the scenarios crash, pause and
   * slow, never the masters above. @default local with the local cluster, off with REDLOCK_NODES
   */
  sandbox: 'local' | 'off';
  /** REDLOCK_SANDBOX_PORT_BASE: first port of the sandbox's five proxies, its redis-servers 5 above. @default any free ports */
  sandboxPortBase: number | null;
  /**
   * REDLOCK_SCENARIO_READING_MS: a teaching scenario's pause between two steps at 1× (the speed
   * buttons divide it), for the viewer to read the narration; 0 runs the steps back to back. Only
   * the pacing: what a step waits for on the nodes (a lease, a quarantine) is waited for anyway.
   * @default 1100
   */
  scenarioReadingMs: number;
  /**
   * REDLOCK_INSTANCE: this process's name among the consoles on one set of masters: the `replica`
   * label of every metric, the owner a lease names (one scenario run at a time, the sandbox
   * supervisor's node actions), the console an event or a quota report came from. 1–64 letters,
   * digits and `. : _ @ -`; must differ between the processes. @default <hostname>:<PORT>
   */
  instance: string;
}

export const CONFIG_DEFAULTS = Object.freeze({
  port: 3000,
  host: '127.0.0.1',
  dataDir: '.data',
  clusterSize: 5,
  portBase: 6381,
  serverPortBase: 16381,
  persistence: 'aof-always' as Persistence,
  keyPrefix: DEFAULT_SETTINGS.keyPrefix,
  maxTtlMs: 60_000,
  nodeTimeoutMs: DEFAULT_SETTINGS.nodeTimeoutMs,
  scenarioReadingMs: READING_MS,
  logLevel: 'info',
});

export type Env = Record<string, string | undefined>;

export function loadConfig(env: Env = process.env, cwd = process.cwd()): Config {
  const persistence = env.REDLOCK_PERSISTENCE?.trim() || CONFIG_DEFAULTS.persistence;
  if (!isPersistence(persistence)) {
    throw new ConfigError(`REDLOCK_PERSISTENCE must be none, rdb, aof-everysec or aof-always, got "${persistence}"`);
  }
  const keyPrefix = env.REDLOCK_KEY_PREFIX ?? CONFIG_DEFAULTS.keyPrefix;
  if (!/^[\w:.\-{}]{1,64}$/.test(keyPrefix)) {
    throw new ConfigError(`REDLOCK_KEY_PREFIX must be 1–64 characters of letters, digits and : . - _ { }, got "${keyPrefix}"`);
  }
  const adminUser = env.REDLOCK_ADMIN_USER?.trim() || null;
  const adminPassword = env.REDLOCK_ADMIN_PASSWORD || null;
  if ((adminUser === null) !== (adminPassword === null)) {
    throw new ConfigError('set both REDLOCK_ADMIN_USER and REDLOCK_ADMIN_PASSWORD, or neither (a login is then generated)');
  }
  if (adminPassword !== null && adminPassword.length < 12) {
    throw new ConfigError('REDLOCK_ADMIN_PASSWORD must be at least 12 characters');
  }
  const clusterSize = int(env, 'REDLOCK_CLUSTER_SIZE', CONFIG_DEFAULTS.clusterSize, 1, 15);
  const nodes = env.REDLOCK_NODES?.trim() ? parseNodeUrls(env.REDLOCK_NODES) : null;
  const sandbox = env.REDLOCK_SANDBOX?.trim() || (nodes ? 'off' : 'local');
  if (sandbox !== 'local' && sandbox !== 'off') throw new ConfigError(`REDLOCK_SANDBOX must be local or off, got "${sandbox}"`);
  const portBase = int(env, 'REDLOCK_PORT_BASE', CONFIG_DEFAULTS.portBase, 1, 65_535 - clusterSize);
  const port = int(env, 'PORT', CONFIG_DEFAULTS.port, 1, 65_535);
  return {
    port,
    host: env.HOST?.trim() || CONFIG_DEFAULTS.host,
    dataDir: resolve(cwd, env.REDLOCK_DATA_DIR?.trim() || CONFIG_DEFAULTS.dataDir),
    nodes,
    clusterSize,
    portBase,
    serverPortBase: int(env, 'REDLOCK_SERVER_PORT_BASE', CONFIG_DEFAULTS.serverPortBase, 1, 65_535 - clusterSize),
    persistence,
    keyPrefix,
    maxTtlMs: int(env, 'REDLOCK_MAX_TTL_MS', CONFIG_DEFAULTS.maxTtlMs, 100, 86_400_000),
    nodeTimeoutMs: int(env, 'REDLOCK_NODE_TIMEOUT_MS', CONFIG_DEFAULTS.nodeTimeoutMs, 1, 60_000),
    adminUser,
    adminPassword,
    trustProxy: parseTrustProxy(env.REDLOCK_TRUST_PROXY),
    logLevel: env.LOG_LEVEL?.trim() || CONFIG_DEFAULTS.logLevel,
    sandbox,
    sandboxPortBase: env.REDLOCK_SANDBOX_PORT_BASE?.trim() ? int(env, 'REDLOCK_SANDBOX_PORT_BASE', 0, 1, 65_535 - 9) : null,
    scenarioReadingMs: int(env, 'REDLOCK_SCENARIO_READING_MS', CONFIG_DEFAULTS.scenarioReadingMs, 0, 60_000),
    instance: instanceOf(env, port),
  };
}

/** REDLOCK_INSTANCE, or `<hostname>:<PORT>` (two consoles on one host differ by port). */
export function instanceOf(env: Env, port: number): string {
  const raw = env.REDLOCK_INSTANCE?.trim();
  const name = raw || `${hostname()}:${port}`.slice(0, 64);
  if (!/^[\w.:@-]{1,64}$/.test(name)) {
    throw new ConfigError(
      raw
        ? `REDLOCK_INSTANCE must be 1–64 letters, digits and . : _ @ -, got "${raw}"`
        : `the host name "${hostname()}" cannot name this console: set REDLOCK_INSTANCE`,
    );
  }
  return name;
}

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}
