import type { Redis } from 'ioredis';
import { elapsedMs, ensureReady, errorMessage, withTimeout } from './connection';
import type { LockSink } from './grouping';
import type { ScannedLock } from './quorum-view';
import { parseMeta } from './meta';
import { runScanBatch } from './scan-script';
import { lockKeyPrefix, lockPattern, resourceOf } from '@redlock-console/redlock';

/** A key matching the pattern that is not a string, so not a lock (reported, never fatal). */
export interface NonStringKey {
  key: string;
  /** What TYPE says: hash, list, set, zset, stream… */
  type: string;
}

/** What to scan for on a node, and how (batch size, metadata, bounds). */
export interface ScanOptions {
  /**
   * Our key prefix, e.g. `rl:`: a key `<prefix>lock:<resource>` holds `<token> <metadata JSON>`
   * (see meta.ts); the scan splits it into the token and the holder metadata.
   */
  keyPrefix: string;
  /**
   * MATCH pattern (a Redis glob). @default `<keyPrefix>lock:*`. Any glob reads other libraries'
   * keys too (node-redlock: the bare resource name, with the token as value).
   */
  pattern?: string;
  /**
   * Keys under this prefix are in our layout (`<token> <metadata JSON>`) and are split. @default
   * `<keyPrefix>lock:`; a semaphore's or read-write lock's scan passes its own namespace (keys.ts).
   */
  splitPrefix?: string;
  /** SCAN COUNT hint per batch (one Lua call each). @default 2000 */
  count?: number;
  /**
   * Return the holder metadata of keys in our layout (their tokens are split off the values
   * either way). @default true
   */
  withMeta?: boolean;
  /**
   * Read metadata only for this node's share of the keys (a hash of the key picks one of `of`
   * shares); snapshot() spreads the reads over the nodes this way. @default { index: 0, of: 1 } (all)
   */
  metaShare?: { index: number; of: number };
  /** Per-batch timeout; also bounds the wait for a client that is not connected. @default 2000 */
  batchTimeoutMs?: number;
  /** Stop after this many keys on one node (`truncated: true`). @default 1_000_000 */
  maxKeys?: number;
  /** Values (tokens, in our layout) longer than this (bytes) are cut; tokens are short ASCII. @default 1024 */
  maxValueBytes?: number;
  /** Aborting rejects with the signal's reason. */
  signal?: AbortSignal;
  /**
   * Hand each lock key to this sink as it arrives instead of collecting it in `NodeScan.keys`
   * (which then stays empty), with the time its batch was sent. Keys may repeat (SCAN's
   * guarantee); a node that fails later has still handed over its earlier batches.
   */
  sink?: LockSink;
}

/** The result of scanning one node: its lock keys, or the error that stopped the scan. */
export interface NodeScan {
  node: number;
  /** False when the node could not be scanned to the end; `keys` is then empty. */
  ok: boolean;
  error: string | null;
  /** String keys matching the pattern, each once (empty with a sink, or when not ok). */
  keys: ScannedLock[];
  /** Lock keys found (with a sink: handed over, repeats included). */
  keyCount: number;
  /** The first non-string keys found (at most 100); `nonStringCount` counts them all. */
  nonString: NonStringKey[];
  nonStringCount: number;
  /** Lua calls made. */
  batches: number;
  /** True when `maxKeys` stopped the scan early. */
  truncated: boolean;
  durationMs: number;
}

/** Defaults of ScanOptions. COUNT 2000 keeps each Lua batch to a few ms of server time. */
export const SCAN_DEFAULTS = Object.freeze({
  count: 2_000,
  withMeta: true,
  batchTimeoutMs: 2_000,
  maxKeys: 1_000_000,
  maxValueBytes: 1_024,
});

const NON_STRING_SAMPLE = 100;

/** The lock key layout is the core's (packages/redlock/src/keys.ts). */
export { escapeGlob, lockKeyPrefix, lockPattern } from '@redlock-console/redlock';

/** The resource of a lock key of our layout; any other key names itself. */
export function resourceOfKey(key: string, keyPrefix: string): string {
  return resourceOf(keyPrefix, key) ?? key;
}

/**
 * Scan one node for lock keys, a bounded batch per round trip (see scan-script.ts). Never KEYS,
 * never throws for a node fault: a node that fails or times out mid-scan gives `ok: false` and
 * the error. Only an abort (options.signal) rejects.
 */
export async function scanNode(client: Redis, node: number, options: ScanOptions): Promise<NodeScan> {
  const started = performance.now();
  const batchTimeoutMs = options.batchTimeoutMs ?? SCAN_DEFAULTS.batchTimeoutMs;
  const maxKeys = options.maxKeys ?? SCAN_DEFAULTS.maxKeys;
  const lockPrefix = options.splitPrefix ?? lockKeyPrefix(options.keyPrefix);
  const args: (string | number)[] = [
    '0',
    options.pattern ?? lockPattern(options.keyPrefix),
    options.count ?? SCAN_DEFAULTS.count,
    lockPrefix,
    (options.withMeta ?? SCAN_DEFAULTS.withMeta) ? '1' : '',
    options.maxValueBytes ?? SCAN_DEFAULTS.maxValueBytes,
    options.metaShare?.index ?? 0,
    options.metaShare?.of ?? 1,
  ];
  const keys: ScannedLock[] = [];
  const seen = new Set<string>();
  const nonString: NonStringKey[] = [];
  const nonStringSeen = new Set<string>();
  let batches = 0;
  let keyCount = 0;
  let truncated = false;
  const sink = options.sink;
  const result = (ok: boolean, error: string | null): NodeScan => ({
    node,
    ok,
    error,
    keys: ok ? keys : [],
    keyCount,
    nonString,
    nonStringCount: nonStringSeen.size,
    batches,
    truncated,
    durationMs: elapsedMs(started),
  });

  try {
    await ensureReady(client, batchTimeoutMs, options.signal);
    do {
      options.signal?.throwIfAborted();
      const sentAt = performance.now();
      const raw = await withTimeout(runScanBatch(client, args), batchTimeoutMs, `scan batch on node ${node}`, options.signal);
      batches++;
      const reply: unknown = typeof raw === 'string' ? JSON.parse(raw) : raw;
      if (!Array.isArray(reply) || reply.length < 1) throw new Error(`node ${node} sent an unexpected scan reply`);
      args[0] = String(reply[0]);
      for (let i = 1; i + 3 < reply.length; i += 4) {
        const key = String(reply[i]);
        const value: unknown = reply[i + 1];
        if (Array.isArray(value)) {
          if (!nonStringSeen.has(key)) {
            nonStringSeen.add(key);
            if (nonString.length < NON_STRING_SAMPLE) nonString.push({ key, type: String(value[0]) });
          }
          continue;
        }
        const token = String(value);
        const pttlMs = Number(reply[i + 2]);
        const rawMeta: unknown = reply[i + 3];
        const meta = parseMeta(rawMeta);
        if (sink) {
          sink.add(key, token, pttlMs, meta, rawMeta !== 0, sentAt);
          keyCount++;
        } else if (!seen.has(key)) {
          seen.add(key);
          keys.push({
            key,
            resource: key.startsWith(lockPrefix) ? key.slice(lockPrefix.length) : key,
            token,
            pttlMs,
            meta,
            metaRead: rawMeta !== 0,
          });
          keyCount++;
        }
      }
      if (keyCount >= maxKeys) {
        truncated = args[0] !== '0';
        break;
      }
    } while (args[0] !== '0');
  } catch (err) {
    if (options.signal?.aborted) throw options.signal.reason ?? err;
    return result(false, errorMessage(err));
  }
  return result(true, null);
}
