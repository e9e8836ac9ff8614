import type { Redis } from 'ioredis';
import { elapsedMs, ensureReady, errorMessage, withTimeout } from './connection';
import { splitLockValue } from './meta';
import { quorumView, type LockCell, type QuorumOptions, type QuorumView } from './quorum-view';
import { lockKeyPrefix, resourceOfKey, SCAN_DEFAULTS } from './scan';
import { luaScript, readLua } from './script';

/**
 * One node's reading of one key, atomically: TYPE, PTTL, and for a string its value. In our
 * layout the value is `<token> <metadata JSON>` (see meta.ts); the caller splits it.
 * KEYS[1] the lock key
 * Reply: [type, PTTL, value | nil]
 */
const READ_KEY = luaScript(`
local t = redis.call('TYPE', KEYS[1])['ok']
local pttl = redis.call('PTTL', KEYS[1])
if t ~= 'string' then return { t, pttl } end
return { t, pttl, redis.call('GET', KEYS[1]) }
`);

/** Options of lockDetail(): our key prefix, an optional explicit key, quorum settings, a per-node timeout. */
export interface DetailOptions extends Partial<QuorumOptions> {
  keyPrefix: string;
  /**
   * Read this key instead of `<keyPrefix>lock:<resource>` (e.g. another library's bare key). Only
   * a key in our layout is split into token and metadata; any other key's value is its token.
   */
  key?: string;
  /** Per node, including the wait for a client that is not connected. @default 2000 */
  timeoutMs?: number;
  /** Values (tokens, in our layout) longer than this (bytes) are cut. @default 1024 */
  maxValueBytes?: number;
  signal?: AbortSignal;
}

/** How reading one node went, and what TYPE the key has there. */
export interface DetailNode {
  node: number;
  ok: boolean;
  error: string | null;
  /** TYPE of the key: 'string' for a lock, 'none' when absent, another type when it is not a lock. */
  type: string | null;
  durationMs: number;
}

/** One resource as every node holds it: the quorum view (null when no node has it) and per-node results. */
export interface LockDetail {
  readAt: number;
  durationMs: number;
  resource: string;
  key: string;
  /** Null when no readable node holds the key as a string. */
  view: QuorumView | null;
  nodes: DetailNode[];
}

/**
 * Read one resource from every node directly (TYPE, PTTL and GET in one Lua call per node, so each
 * node's answer is consistent; the value gives the token and the holder metadata), no scan. Node
 * ids are positions in `clients` + 1. Node faults are reported per node; only an abort rejects.
 */
export async function lockDetail(clients: readonly Redis[], resource: string, options: DetailOptions): Promise<LockDetail> {
  options.signal?.throwIfAborted();
  const readAt = Date.now();
  const started = performance.now();
  const key = options.key ?? `${lockKeyPrefix(options.keyPrefix)}${resource}`;
  const inLayout = key.startsWith(lockKeyPrefix(options.keyPrefix));
  const timeoutMs = options.timeoutMs ?? SCAN_DEFAULTS.batchTimeoutMs;
  const maxValueBytes = options.maxValueBytes ?? SCAN_DEFAULTS.maxValueBytes;

  const readings = await Promise.all(
    clients.map(async (client, i) => {
      const node = i + 1;
      const t0 = performance.now();
      try {
        const read = async () => {
          await ensureReady(client, timeoutMs, options.signal);
          return readLua(client, READ_KEY, [key], []);
        };
        const reply = await withTimeout(read(), timeoutMs, `reading ${key} on node ${node}`, options.signal);
        if (!Array.isArray(reply) || reply.length < 2) throw new Error(`node ${node} sent an unexpected reply`);
        const [typeReply, pttlReply, value] = reply as unknown[];
        const type = String(typeReply);
        let cell: LockCell = { node, known: true, present: false, token: null, pttlMs: null, meta: null };
        if (type === 'string' && typeof value === 'string') {
          // Our layout: `<token> <metadata JSON>`; bad JSON or a bare token is no metadata.
          const { token, meta } = inLayout ? splitLockValue(value) : { token: value, meta: null };
          cell = { node, known: true, present: true, token: token.slice(0, maxValueBytes), pttlMs: Number(pttlReply), meta };
        }
        return { info: { node, ok: true, error: null, type, durationMs: elapsedMs(t0) }, cell };
      } catch (err) {
        if (options.signal?.aborted) throw options.signal.reason ?? err;
        const cell: LockCell = { node, known: false, present: false, token: null, pttlMs: null, meta: null };
        return { info: { node, ok: false, error: errorMessage(err), type: null, durationMs: elapsedMs(t0) }, cell };
      }
    }),
  );

  const cells = readings.map((r) => r.cell);
  const shownResource = options.key ? resourceOfKey(key, options.keyPrefix) : resource;
  const view = cells.some((c) => c.present)
    ? quorumView(shownResource, key, cells, {
        configuredNodes: options.configuredNodes ?? clients.length,
        driftFactor: options.driftFactor,
        expiringThresholdMs: options.expiringThresholdMs,
        maxTtlMs: options.maxTtlMs,
      })
    : null;
  return { readAt, durationMs: elapsedMs(started), resource: shownResource, key, view, nodes: readings.map((r) => r.info) };
}
