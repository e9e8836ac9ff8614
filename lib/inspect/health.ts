import type { Redis } from 'ioredis';
import { epochKey } from '@redlock-console/redlock';
import { ensureReady, errorMessage, withTimeout } from './connection';
import { quarantineOf, type QuarantineInfo } from './quarantine';
import { refusalOf, safetyVerdict, type Refusal, type SafetyVerdict, type VerdictOptions } from './verdict';

export type { QuarantineInfo } from './quarantine';

/** How the node keeps its data across a crash, as far as it can be read. */
export interface PersistenceInfo {
  /** 'aof' = AOF on with an unreadable appendfsync; 'unknown' = AOF off and CONFIG refused. */
  mode: 'none' | 'rdb' | 'aof-always' | 'aof-everysec' | 'aof-no' | 'aof' | 'unknown';
  aofEnabled: boolean | null;
  appendfsync: string | null;
  /** CONFIG GET save: '' when RDB snapshots are off; null when CONFIG is refused. */
  rdbSaves: string | null;
}

/** Everything the console shows about one node, with the safety verdict drawn from it. */
export interface NodeHealth {
  node: number;
  up: boolean;
  error: string | null;
  /** Local clock (ms) when the check started. */
  checkedAt: number;
  /** PING round trip. */
  rttMs: number | null;
  /** Node clock minus local clock, RTT-corrected: serverMs − (sentAt + rtt/2). */
  clockOffsetMs: number | null;
  version: string | null;
  /** INFO server run_id: the redis-server process answering now. */
  runId: string | null;
  /** INFO replication role: 'master' or 'slave'. */
  role: string | null;
  uptimeMs: number | null;
  persistence: PersistenceInfo | null;
  maxmemoryPolicy: string | null;
  notifyKeyspaceEvents: string | null;
  /** False when CONFIG GET is refused (managed Redis); null when the node is down. */
  configReadable: boolean | null;
  quarantine: QuarantineInfo | null;
  /** Why the lock core votes against this node whatever its quarantine (evicting policy, another ceiling), else null. */
  refusal: Refusal | null;
  /** Up, a master, not quarantined (nor about to be, with quarantine on) and not refused: its vote can count. */
  usable: boolean;
  verdict: SafetyVerdict;
}

/** Inputs of the health check: key prefix (for the sentinel), lease ceiling, drift factor, quarantine on/off. */
export interface HealthOptions extends VerdictOptions {
  keyPrefix: string;
  /** Bound on the whole check of one node, including the wait for a connection. @default 1000 */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** Default bound on checking one node, connection wait included. */
export const HEALTH_TIMEOUT_MS = 1_000;
const CONFIG_PARAMETERS = ['appendonly', 'appendfsync', 'save', 'maxmemory-policy', 'notify-keyspace-events'] as const;

/** Local wall clock with sub-millisecond resolution. */
const localNowMs = () => performance.timeOrigin + performance.now();

/** Check every node in parallel; node ids are positions in `clients` + 1. Never rejects but on abort. */
export function clusterHealth(clients: readonly Redis[], options: HealthOptions): Promise<NodeHealth[]> {
  return Promise.all(clients.map((client, i) => nodeHealth(client, i + 1, options)));
}

/** Check one node: reachability, RTT, clock, setup and quarantine, and the safety verdict. */
export async function nodeHealth(client: Redis, node: number, options: HealthOptions): Promise<NodeHealth> {
  const checkedAt = Date.now();
  const timeoutMs = options.timeoutMs ?? HEALTH_TIMEOUT_MS;
  let facts: Omit<NodeHealth, 'verdict' | 'usable' | 'refusal'>;
  try {
    facts = await withTimeout(
      readFacts(client, node, checkedAt, timeoutMs, options),
      timeoutMs,
      `health check of node ${node}`,
      options.signal,
    );
  } catch (err) {
    if (options.signal?.aborted) throw options.signal.reason ?? err;
    facts = {
      node,
      up: false,
      error: errorMessage(err),
      checkedAt,
      rttMs: null,
      clockOffsetMs: null,
      version: null,
      runId: null,
      role: null,
      uptimeMs: null,
      persistence: null,
      maxmemoryPolicy: null,
      notifyKeyspaceEvents: null,
      configReadable: null,
      quarantine: null,
    };
  }
  const quarantineBlocks =
    options.quarantineEnabled && (facts.quarantine?.state === 'quarantined' || facts.quarantine?.state === 'unknown');
  const refusal = facts.up ? refusalOf(facts, options) : null;
  const usable = facts.up && (facts.role === null || facts.role === 'master') && !quarantineBlocks && refusal === null;
  return { ...facts, refusal, usable, verdict: safetyVerdict(facts, options) };
}

async function readFacts(
  client: Redis,
  node: number,
  checkedAt: number,
  timeoutMs: number,
  options: HealthOptions,
): Promise<Omit<NodeHealth, 'verdict' | 'usable' | 'refusal'>> {
  await ensureReady(client, timeoutMs, options.signal);
  const p0 = performance.now();
  await client.ping();
  const rttMs = round2(performance.now() - p0);

  // Clock: the TIME sample with the smallest round trip of three.
  let best: { rtt: number; offset: number } | null = null;
  for (let i = 0; i < 3; i++) {
    const sentAt = localNowMs();
    const t0 = performance.now();
    const [seconds, micros] = await client.time();
    const rtt = performance.now() - t0;
    const serverMs = Number(seconds) * 1000 + Number(micros) / 1000;
    const offset = serverMs - (sentAt + rtt / 2);
    if (!best || rtt < best.rtt) best = { rtt, offset };
  }
  const clockOffsetMs = round2(best!.offset);

  const [infoText, epochRaw, ...configReplies] = await Promise.all([
    client.info(), // the default sections (server, memory, persistence, replication…), on any Redis version
    client.hgetall(epochKey(options.keyPrefix)).catch(() => ({}) as Record<string, string>),
    ...CONFIG_PARAMETERS.map((name) =>
      client.config('GET', name).then(
        (r) => ({ ok: true as const, value: pairValue(r) }),
        (err: unknown) => ({ ok: false as const, value: errorMessage(err) }),
      ),
    ),
  ]);
  const info = parseInfo(infoText);
  const configReadable = configReplies.every((r) => r.ok);
  const config = Object.fromEntries(CONFIG_PARAMETERS.map((name, i) => [name, configReplies[i]?.ok ? configReplies[i].value : null]));

  const aofEnabled =
    config.appendonly != null
      ? config.appendonly === 'yes'
      : info.get('aof_enabled') !== undefined
        ? info.get('aof_enabled') === '1'
        : null;
  const persistence = persistenceOf(aofEnabled, config.appendfsync ?? null, config.save ?? null);
  const uptime = info.get('uptime_in_seconds');
  const uptimeMs = uptime === undefined ? null : Number(uptime) * 1000;
  const runId = info.get('run_id') ?? null;
  const nodeNow = localNowMs() + clockOffsetMs;

  return {
    node,
    up: true,
    error: null,
    checkedAt,
    rttMs,
    clockOffsetMs,
    version: info.get('redis_version') ?? null,
    runId,
    role: info.get('role') ?? null,
    uptimeMs,
    persistence,
    maxmemoryPolicy: config['maxmemory-policy'] ?? info.get('maxmemory_policy') ?? null,
    notifyKeyspaceEvents: config['notify-keyspace-events'] ?? null,
    configReadable,
    quarantine: quarantineOf(epochRaw, {
      nodeNow,
      runIdNow: runId,
      uptimeMs,
      maxTtlMs: options.maxTtlMs,
      enabled: options.quarantineEnabled,
    }),
  };
}

/** INFO text as field → value. */
export function parseInfo(text: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0 && !line.startsWith('#')) fields.set(line.slice(0, colon), line.slice(colon + 1).trim());
  }
  return fields;
}

function pairValue(reply: unknown): string | null {
  return Array.isArray(reply) && reply.length >= 2 ? String(reply[1]) : null;
}

function persistenceOf(aofEnabled: boolean | null, appendfsync: string | null, rdbSaves: string | null): PersistenceInfo {
  let mode: PersistenceInfo['mode'];
  if (aofEnabled === true) {
    mode = appendfsync === 'always' ? 'aof-always' : appendfsync === 'everysec' ? 'aof-everysec' : appendfsync === 'no' ? 'aof-no' : 'aof';
  } else if (aofEnabled === false && rdbSaves !== null) {
    mode = rdbSaves.trim() === '' ? 'none' : 'rdb';
  } else mode = 'unknown';
  return { mode, aofEnabled, appendfsync, rdbSaves };
}

function round2(ms: number): number {
  return Math.round(ms * 100) / 100;
}
