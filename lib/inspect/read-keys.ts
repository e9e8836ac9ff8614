import type { Redis } from 'ioredis';
import { elapsedMs, ensureReady, errorMessage, withTimeout } from './connection';
import { LockGrouper } from './grouping';
import { parseMeta } from './meta';
import type { QuorumOptions, QuorumView } from './quorum-view';
import { lockKeyPrefix, SCAN_DEFAULTS } from './scan';
import { luaScript, readLua } from './script';

/**
 * A few lock keys read directly on one node, atomically: per key its value and PTTL. A key in our
 * layout (under our lock-key prefix) holds `<token> <metadata JSON>` (see meta.ts) and is split
 * at its first space into the token and the metadata text (none for a bare token); other keys
 * keep their raw value and have no metadata. A key that is missing or not a string reads as
 * absent (pcall: WRONGTYPE is not an error here).
 * KEYS the lock keys   ARGV[1] our lock-key prefix   ARGV[2] longest value (token), in bytes
 * Reply: 3 items per key: token (our layout) | raw value | nil, PTTL, metadata JSON text | nil
 * (Also the live index's re-read of the keys that changed, lock-index.ts.)
 */
export const READ_KEYS = luaScript(`
local lockPrefix = ARGV[1]
local plen = #lockPrefix
local maxBytes = tonumber(ARGV[2])
local out = {}
for i, key in ipairs(KEYS) do
  local value = redis.pcall('GET', key)
  local pttl, meta = -2, false
  if type(value) == 'string' then
    pttl = redis.call('PTTL', key)
    if plen > 0 and string.sub(key, 1, plen) == lockPrefix then
      local space = string.find(value, ' ', 1, true)
      if space then
        meta = string.sub(value, space + 1)
        value = string.sub(value, 1, space - 1)
      end
    end
    if #value > maxBytes then value = string.sub(value, 1, maxBytes) end
  else
    value = false
  end
  out[3 * i - 2] = value
  out[3 * i - 1] = pttl
  out[3 * i] = meta
end
return out`);

/** Options of readLocks(): our key prefix, quorum settings, a per-node timeout. */
export interface ReadLocksOptions extends Partial<QuorumOptions> {
  keyPrefix: string;
  /** Per node, including the wait for a client that is not connected. @default 2000 */
  timeoutMs?: number;
  /** Values (tokens, in our layout) longer than this (bytes) are cut. @default 1024 */
  maxValueBytes?: number;
  signal?: AbortSignal;
}

/** How reading one node went. */
export interface ReadNode {
  node: number;
  ok: boolean;
  error: string | null;
  durationMs: number;
}

/**
 * Read these lock keys directly on every node (one Lua call per node, so each node's answer is
 * consistent) and classify them: the quorum views of those held anywhere, sorted by resource,
 * exact as of the read (not as a scan saw them). A node that fails or times out gives unknown
 * cells; only an abort rejects. Node ids are positions in `clients` + 1.
 */
export async function readLocks(
  clients: readonly Redis[],
  locks: readonly { resource: string; key: string }[],
  options: ReadLocksOptions,
): Promise<{ views: QuorumView[]; nodes: ReadNode[] }> {
  options.signal?.throwIfAborted();
  const timeoutMs = options.timeoutMs ?? SCAN_DEFAULTS.batchTimeoutMs;
  const lockPrefix = lockKeyPrefix(options.keyPrefix);
  const args = [lockPrefix, options.maxValueBytes ?? SCAN_DEFAULTS.maxValueBytes];
  const keys = locks.map((l) => l.key);
  const grouper = new LockGrouper(clients.length, lockPrefix);
  const nodes = await Promise.all(
    clients.map(async (client, i): Promise<ReadNode> => {
      const node = i + 1;
      const t0 = performance.now();
      if (keys.length === 0) return { node, ok: true, error: null, durationMs: 0 };
      try {
        const read = async () => {
          await ensureReady(client, timeoutMs, options.signal);
          return readLua(client, READ_KEYS, keys, args);
        };
        const sentAt = performance.now();
        const reply = await withTimeout(read(), timeoutMs, `reading ${keys.length} keys on node ${node}`, options.signal);
        if (!Array.isArray(reply)) throw new Error(`node ${node} sent an unexpected reply`);
        locks.forEach(({ resource, key }, k) => {
          const value: unknown = reply[3 * k];
          if (typeof value !== 'string') return;
          grouper.add(i, key, value, Number(reply[3 * k + 1]), parseMeta(reply[3 * k + 2]), true, sentAt, resource);
        });
        return { node, ok: true, error: null, durationMs: elapsedMs(t0) };
      } catch (err) {
        if (options.signal?.aborted) throw options.signal.reason ?? err;
        return { node, ok: false, error: errorMessage(err), durationMs: elapsedMs(t0) };
      }
    }),
  );
  const views = grouper.views(
    nodes,
    {
      configuredNodes: options.configuredNodes ?? clients.length,
      driftFactor: options.driftFactor,
      expiringThresholdMs: options.expiringThresholdMs,
      maxTtlMs: options.maxTtlMs,
    },
    performance.now(),
  );
  return { views, nodes };
}
