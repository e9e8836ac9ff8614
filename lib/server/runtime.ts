import 'server-only';
import { Redis } from 'ioredis';
import { ControlClient } from '../cluster/control-client';
import { parseNodeUrls, type NodeEndpoint } from '../config/node-urls';

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
  driftFactor: number;
  /** Why the runtime is unconfigured, for the UI. */
  problem: string | null;
}

const KEY = Symbol.for('redlock-console.runtime');
type Holder = { [KEY]?: Runtime };

/**
 * The server's one set of Redis connections and supervisor handle, kept on globalThis so that a
 * `next dev` hot reload reuses them instead of leaking a new set per reload.
 */
export function getRuntime(): Runtime {
  const holder = globalThis as Holder;
  holder[KEY] ??= createRuntime(process.env);
  return holder[KEY];
}

function createRuntime(env: NodeJS.ProcessEnv): Runtime {
  const keyPrefix = env.REDLOCK_KEY_PREFIX || 'rl:';
  const maxTtlMs = Number(env.REDLOCK_MAX_TTL_MS) || 60_000;
  const driftFactor = 0.01;
  if (!env.REDLOCK_NODES?.trim()) {
    return { mode: 'unconfigured', endpoints: [], clients: [], control: null, keyPrefix, maxTtlMs, driftFactor,
      problem: 'No masters configured: start the console with `npm start` (local cluster) or set REDLOCK_NODES.' };
  }
  let endpoints: NodeEndpoint[];
  try {
    endpoints = parseNodeUrls(env.REDLOCK_NODES);
  } catch (err) {
    return { mode: 'unconfigured', endpoints: [], clients: [], control: null, keyPrefix, maxTtlMs, driftFactor, problem: (err as Error).message };
  }
  const control = env.REDLOCK_MODE === 'sandbox' ? ControlClient.fromEnv(env) : null;
  return {
    mode: control ? 'sandbox' : 'external',
    endpoints,
    clients: endpoints.map((e) => createClient(e.url)),
    control,
    keyPrefix,
    maxTtlMs,
    driftFactor,
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

