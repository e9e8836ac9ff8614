import type { Redis } from 'ioredis';

/**
 * The node epoch sentinel (`<prefix>epoch`, a hash without TTL) tells the lock core whether a node
 * still holds every lock it granted. A node that lost its data (restart without persistence,
 * FLUSHALL, a brand-new empty node) has no sentinel; the acquire script then writes one with a
 * quarantine and votes against until it has passed (see scripts/acquire.lua).
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
}

export function epochKey(keyPrefix: string): string {
  return `${keyPrefix}epoch`;
}

/** The node's own clock in ms, from TIME (the same clock the Lua scripts use). */
export async function nodeTimeMs(client: Redis): Promise<number> {
  const [seconds, micros] = await client.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

/** Write a clean sentinel: the node votes normally from now on. Overwrites a running quarantine. */
export async function markNodeClean(client: Redis, options: { keyPrefix: string; maxTtlMs: number; origin?: string }): Promise<EpochSentinel> {
  const now = await nodeTimeMs(client);
  const sentinel: EpochSentinel = { createdAt: now, quarantineUntil: now, maxTtlMs: options.maxTtlMs, origin: options.origin ?? 'clean' };
  await client.hset(epochKey(options.keyPrefix), {
    [EPOCH_FIELDS.createdAt]: String(sentinel.createdAt),
    [EPOCH_FIELDS.quarantineUntil]: String(sentinel.quarantineUntil),
    [EPOCH_FIELDS.maxTtlMs]: String(sentinel.maxTtlMs),
    [EPOCH_FIELDS.origin]: sentinel.origin,
  });
  return sentinel;
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
  };
}
