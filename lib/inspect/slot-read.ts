import type { Redis } from 'ioredis';
import {
  rwIntentKey,
  rwKeyPrefix,
  rwPattern,
  rwSlotKey,
  semaphoreKeyPrefix,
  semaphorePattern,
  semaphoreSlotKey,
} from '@redlock-console/redlock';
import { LIMITS } from '@redlock-console/redlock/vocabulary';
import { elapsedMs, ensureReady, errorMessage, withTimeout } from './connection';
import { nodeNumber } from '../node-number';
import { parseMeta } from './meta';
import type { LockCell, QuorumOptions } from './quorum-view';
import { READ_KEYS } from './read-keys';
import { scanNode, SCAN_DEFAULTS } from './scan';
import { readLua } from './script';
import { groupSlotLocks, type SlotKind, type SlotLock } from './slot-locks';

/**
 * Reading semaphores and read-write locks from every master: a bounded SCAN of their namespace
 * (the listing; the scanner's batches, timeouts and key bound) or a direct read of one lock's
 * slot keys (the detail). Node faults are reported per node, never thrown; only an abort rejects.
 */

type KeyReading = Omit<LockCell, 'node' | 'known' | 'present'>;

/** Options of scanSlotLocks() and readSlotLock(). */
export interface SlotReadOptions extends QuorumOptions {
  keyPrefix: string;
  /** Per batch (scan) or per node (read), including the wait for a client that is not connected. @default 2000 */
  timeoutMs?: number;
  /** Stop a node's scan after this many keys (`truncated`). @default 1,000,000 */
  maxKeys?: number;
  signal?: AbortSignal;
}

/** How reading one node went. */
export interface SlotReadNode {
  node: number;
  ok: boolean;
  error: string | null;
  keys: number;
  truncated: boolean;
  durationMs: number;
}

/** Every lock of a kind on the masters (or one lock's keys), with each node's outcome. */
export interface SlotReading {
  kind: SlotKind;
  readAt: number;
  durationMs: number;
  nodes: SlotReadNode[];
  locks: SlotLock[];
}

/** The kind's SCAN pattern and the prefix of its keys (which hold `<token> <metadata JSON>`). */
function namespaceOf(kind: SlotKind, keyPrefix: string): { pattern: string; prefix: string } {
  return kind === 'semaphore'
    ? { pattern: semaphorePattern(keyPrefix), prefix: semaphoreKeyPrefix(keyPrefix) }
    : { pattern: rwPattern(keyPrefix), prefix: rwKeyPrefix(keyPrefix) };
}

const quorumOptions = (o: SlotReadOptions): QuorumOptions => ({
  configuredNodes: o.configuredNodes,
  driftFactor: o.driftFactor,
  expiringThresholdMs: o.expiringThresholdMs,
  maxTtlMs: o.maxTtlMs,
});

/** Scan every master for `kind`'s keys and group them into locks (sorted by resource). */
export async function scanSlotLocks(clients: readonly Redis[], kind: SlotKind, options: SlotReadOptions): Promise<SlotReading> {
  const readAt = Date.now();
  const started = performance.now();
  const { pattern, prefix } = namespaceOf(kind, options.keyPrefix);
  const scans = await Promise.all(
    clients.map((client, i) =>
      scanNode(client, nodeNumber(i), {
        keyPrefix: options.keyPrefix,
        pattern,
        splitPrefix: prefix,
        batchTimeoutMs: options.timeoutMs,
        maxKeys: options.maxKeys,
        signal: options.signal,
      }),
    ),
  );
  const readings = scans.map((scan) =>
    scan.ok ? new Map<string, KeyReading>(scan.keys.map((k) => [k.key, { token: k.token, pttlMs: k.pttlMs, meta: k.meta }])) : null,
  );
  return {
    kind,
    readAt,
    durationMs: elapsedMs(started),
    nodes: scans.map((s) => ({
      node: s.node,
      ok: s.ok,
      error: s.error,
      keys: s.keyCount,
      truncated: s.truncated,
      durationMs: s.durationMs,
    })),
    locks: groupSlotLocks(kind, options.keyPrefix, readings, quorumOptions(options)),
  };
}

/**
 * The keys one lock can have: every slot a semaphore may have (LIMITS.maxSemaphoreLimit) or a
 * read-write lock's reader slots (at most LIMITS.maxResources) and its intent. Read directly, they
 * need no scan and no knowledge of the lock's limit.
 */
export function slotKeysOf(kind: SlotKind, keyPrefix: string, resource: string): string[] {
  if (kind === 'semaphore') return Array.from({ length: LIMITS.maxSemaphoreLimit }, (_, i) => semaphoreSlotKey(keyPrefix, resource, i));
  const slots = Array.from({ length: LIMITS.maxResources }, (_, i) => rwSlotKey(keyPrefix, resource, i));
  return [...slots, rwIntentKey(keyPrefix, resource)];
}

/**
 * Read one semaphore's or read-write lock's keys directly on every node (one Lua call per node,
 * so each node's answer is consistent) and summarise them. `locks` holds the one lock, or nothing
 * when no node holds any of its keys.
 */
export async function readSlotLock(
  clients: readonly Redis[],
  kind: SlotKind,
  resource: string,
  options: SlotReadOptions,
): Promise<SlotReading> {
  options.signal?.throwIfAborted();
  const readAt = Date.now();
  const started = performance.now();
  const timeoutMs = options.timeoutMs ?? SCAN_DEFAULTS.batchTimeoutMs;
  const keys = slotKeysOf(kind, options.keyPrefix, resource);
  const args = [namespaceOf(kind, options.keyPrefix).prefix, SCAN_DEFAULTS.maxValueBytes];
  const results = await Promise.all(
    clients.map(async (client, i) => {
      const node = nodeNumber(i);
      const t0 = performance.now();
      try {
        const read = async () => {
          await ensureReady(client, timeoutMs, options.signal);
          return readLua(client, READ_KEYS, keys, args);
        };
        const reply = await withTimeout(read(), timeoutMs, `reading ${resource}'s slots on node ${node}`, options.signal);
        if (!Array.isArray(reply)) throw new Error(`node ${node} sent an unexpected reply`);
        const found = new Map<string, KeyReading>();
        keys.forEach((key, k) => {
          const token: unknown = reply[3 * k];
          if (typeof token === 'string') found.set(key, { token, pttlMs: Number(reply[3 * k + 1]), meta: parseMeta(reply[3 * k + 2]) });
        });
        return { node, ok: true, error: null, keys: found.size, truncated: false, durationMs: elapsedMs(t0), found };
      } catch (err) {
        if (options.signal?.aborted) throw options.signal.reason ?? err;
        return { node, ok: false, error: errorMessage(err), keys: 0, truncated: false, durationMs: elapsedMs(t0), found: null };
      }
    }),
  );
  const readings = results.map((r) => r.found);
  const locks = groupSlotLocks(kind, options.keyPrefix, readings, quorumOptions(options)).filter((l) => l.resource === resource);
  return {
    kind,
    readAt,
    durationMs: elapsedMs(started),
    nodes: results.map(({ found: _found, ...n }) => n),
    locks,
  };
}
