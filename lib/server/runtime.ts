import 'server-only';
import { Redis } from 'ioredis';
import { ControlClient } from '../cluster/control-client';
import { CONFIG_DEFAULTS, loadConfig, type Config, type Env } from '../config/env';
import type { NodeEndpoint } from '../config/node-urls';
import { DEFAULT_SETTINGS } from '@redlock-console/redlock';

export type RuntimeMode = 'sandbox' | 'external' | 'unconfigured';

export interface Runtime {
  mode: RuntimeMode;
  endpoints: NodeEndpoint[];
  /** One long-lived client per master, in configuration order. */
  clients: Redis[];
  /** The supervisor's control channel; null unless the console runs the local cluster. */
  control: ControlClient | null;
  keyPrefix: string;
  maxTtlMs: number;
  /** The lock service's per-node round deadline (REDLOCK_NODE_TIMEOUT_MS). */
  nodeTimeoutMs: number;
  driftFactor: number;
  /** A teaching scenario's pause between two steps at 1× (REDLOCK_SCENARIO_READING_MS). */
  scenarioReadingMs: number;
  /** Why the runtime is unconfigured, for the UI. */
  problem: string | null;
}

let runtime: Runtime | undefined;

/**
 * The server's one set of Redis connections and supervisor handle. One per process: the console's
 * process evaluates lib/server once, and a `next dev` hot reload evaluates only Next.js's shims of
 * it again (scripts/support/node-copy-loader.mjs), which import this same module.
 */
export function getRuntime(): Runtime {
  runtime ??= createRuntime(process.env);
  return runtime;
}

/** The runtime for an environment (exported for tests; the server uses getRuntime). */
export function createRuntime(env: Env): Runtime {
  // The lock core's drift allowance (the console does not configure its own).
  const driftFactor = DEFAULT_SETTINGS.driftFactor;
  let config: Config;
  try {
    config = loadConfig(env);
  } catch (err) {
    return {
      mode: 'unconfigured',
      endpoints: [],
      clients: [],
      control: null,
      keyPrefix: CONFIG_DEFAULTS.keyPrefix,
      maxTtlMs: CONFIG_DEFAULTS.maxTtlMs,
      nodeTimeoutMs: CONFIG_DEFAULTS.nodeTimeoutMs,
      driftFactor,
      scenarioReadingMs: CONFIG_DEFAULTS.scenarioReadingMs,
      problem: (err as Error).message,
    };
  }
  const { keyPrefix, maxTtlMs, nodeTimeoutMs, nodes, scenarioReadingMs } = config;
  if (nodes === null) {
    return {
      mode: 'unconfigured',
      endpoints: [],
      clients: [],
      control: null,
      keyPrefix,
      maxTtlMs,
      nodeTimeoutMs,
      driftFactor,
      scenarioReadingMs,
      problem: 'No masters configured: start the console with `npm start` (local cluster) or set REDLOCK_NODES.',
    };
  }
  const control = env.REDLOCK_MODE === 'sandbox' ? ControlClient.fromEnv(env) : null;
  return {
    mode: control ? 'sandbox' : 'external',
    endpoints: nodes,
    clients: nodes.map((e) => createClient(e.url)),
    control,
    keyPrefix,
    maxTtlMs,
    nodeTimeoutMs,
    driftFactor,
    scenarioReadingMs,
    problem: null,
  };
}

/**
 * A console connection to one master. No offline queue and no per-request retries: a dead or
 * partitioned node must answer "unreachable" at once, never hold requests hostage.
 */
export function createClient(url: string): Redis {
  const client = new Redis(url, {
    lazyConnect: false,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 1_000,
    commandTimeout: 1_000,
    retryStrategy: (attempt) => Math.min(50 * attempt, 1_000),
    enableReadyCheck: true,
  });
  client.on('error', () => undefined); // surfaced per request; never an unhandled 'error' event
  return client;
}
