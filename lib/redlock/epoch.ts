import type { Redis } from 'ioredis';
import { MARK_CLEAN_SCRIPT } from './scripts';

/**
 * The node epoch sentinel (`<prefix>epoch`, a hash without TTL) tells the lock core whether a node
 * still holds every lock it granted. A node that lost its data (restart without persistence,
 * FLUSHALL, a brand-new empty node) has no sentinel; the acquire that finds this votes against and
 * writes one with a quarantine (scripts/quarantine.lua), and the node votes against until it has
 * passed (see grant.ts).
 *
 * Marking a node clean is the explicit statement "this node holds no lock that was lost": true for
 * a brand-new data directory, and an operator's judgement call otherwise. This module is the one
 * place that knows the sentinel's layout; lib/cluster (fresh data directories), the lock core's
 * `markNodesClean()` and the console's mark-clean action all use it.
 */
export const EPOCH_FIELDS = Object.freeze({
  createdAt: 'createdAt',
  quarantineUntil: 'quarantineUntil',
  maxTtlMs: 'maxTtlMs',
  origin: 'origin',
  serverStartedAt: 'serverStartedAt',
});

export interface EpochSentinel {
  /** Node clock (ms) when the sentinel was written. */
  createdAt: number;
  /** Node clock (ms) until which the node votes against every acquire; ≤ createdAt when clean. */
  quarantineUntil: number;
  /** The lease ceiling the quarantine was computed with. */
  maxTtlMs: number;
  /** 'clean' (marked), 'quarantine' (written by acquire after a data loss), or free text. */
  origin: string;
  /** Node clock (ms) at which the redis-server process started, when a quarantine recorded it. */
  serverStartedAt?: number;
}

export function epochKey(keyPrefix: string): string {
  return `${keyPrefix}epoch`;
}

/**
 * The node's fence register (`<prefix>fence`, a string without TTL): the highest fence confirmed
 * on this node, or the hybrid-logical-clock floor now(ms) × 1000 written when the node was found
 * to have lost its data or was marked clean. One key per node, whatever the number of resources.
 */
export function fenceKey(keyPrefix: string): string {
  return `${keyPrefix}fence`;
}

/** The node's fence register, or 0 when it has none. */
export async function readFenceRegister(client: Redis, keyPrefix: string): Promise<number> {
  const raw = await client.get(fenceKey(keyPrefix));
  return raw === null ? 0 : Number(raw);
}

/** The node's own clock in ms, from TIME (the same clock the Lua scripts use). */
export async function nodeTimeMs(client: Redis): Promise<number> {
  const [seconds, micros] = await client.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

/**
 * Write a clean sentinel: the node votes normally from now on. Overwrites a running quarantine.
 * In the same atomic step (scripts/mark-clean.lua) the fence register is raised to at least
 * now(ms) × 1000, since a node that lost its data lost its register too and must not hand out a
 * fence lower than one already issued (see the hybrid-logical-clock note in lib/redlock/protocol.ts).
 */
export async function markNodeClean(client: Redis, options: { keyPrefix: string; maxTtlMs: number; origin?: string }): Promise<EpochSentinel> {
  const origin = options.origin ?? 'clean';
  const reply = (await client.eval(MARK_CLEAN_SCRIPT.source, 2, epochKey(options.keyPrefix), fenceKey(options.keyPrefix),
    options.maxTtlMs, origin)) as [number, number];
  const now = Number(reply[0]);
  return { createdAt: now, quarantineUntil: now, maxTtlMs: options.maxTtlMs, origin };
}

/** The sentinel as stored, or null when the node has none (it lost its data, or never had one). */
export async function readEpoch(client: Redis, keyPrefix: string): Promise<EpochSentinel | null> {
  const raw = await client.hgetall(epochKey(keyPrefix));
  return parseEpoch(raw);
}

export function parseEpoch(raw: Record<string, string> | null | undefined): EpochSentinel | null {
  if (!raw || raw[EPOCH_FIELDS.createdAt] === undefined) return null;
  return {
    createdAt: Number(raw[EPOCH_FIELDS.createdAt]),
    quarantineUntil: Number(raw[EPOCH_FIELDS.quarantineUntil] ?? 0),
    maxTtlMs: Number(raw[EPOCH_FIELDS.maxTtlMs] ?? 0),
    origin: raw[EPOCH_FIELDS.origin] ?? 'unknown',
    ...(raw[EPOCH_FIELDS.serverStartedAt] !== undefined ? { serverStartedAt: Number(raw[EPOCH_FIELDS.serverStartedAt]) } : {}),
  };
}
