import type { Redis } from 'ioredis';
import { luaScript, readLua } from './script';

/**
 * One bounded batch of the inspection scan, in one round trip: SCAN cursor MATCH pattern COUNT n,
 * then MGET of the keys found (one call per 1000 keys; MGET answers nil for non-string keys, which
 * then get a TYPE) and PTTL per key. A key in our layout (under our lock-key prefix) holds
 * `<token> <metadata JSON>` (see meta.ts): it is split at its first space, so the key's value in
 * the reply is the TOKEN and the metadata is the text after the space (a value without a space is
 * a bare token: metadata "none"). Keys outside our layout keep their raw value and have no
 * metadata. The lock core keeps its own generated script module; this one is the scanner's own.
 *
 * Metadata is the same on every node that holds a lock, so a snapshot ships it from ONE node per
 * key (ARGV[7]/ARGV[8]: this node's share) instead of from all N; the snapshot fetches the few that
 * node did not hold afterwards (see meta-fill.ts). The share is a cheap hash of the key's last two
 * bytes and length, computed here only; the reply says per key whether the metadata was read.
 * The metadata arrives as raw JSON text; the client parses it (parseMeta).
 *
 * The reply is ONE JSON string (cjson): far cheaper for the node to write and for the client to
 * parse than a RESP array of four items per key. Values (tokens, in our layout) are cut at ARGV[6]
 * bytes; bytes that are not UTF-8 arrive as U+FFFD (tokens are ASCII).
 *
 * No shebang on purpose: the script only reads, and without flags it also runs on Redis 6. It goes
 * out as EVALSHA_RO where the server has it (script.ts): it runs on read-only replicas (which the
 * health audit wants to see into) and through a CLIENT PAUSE WRITE. Standalone masters only.
 *
 * KEYS: none (the keys come from SCAN).
 * ARGV[1] cursor            ARGV[2] MATCH pattern (a Redis glob)     ARGV[3] COUNT hint
 * ARGV[4] our lock-key prefix (`rl:lock:`): keys under it are split into token and metadata
 * ARGV[5] '1' = return metadata (for this node's share), '' = never   ARGV[6] longest value, in bytes
 * ARGV[7] this node's share (0-based)   ARGV[8] number of shares (1 = every key's metadata)
 * Reply: JSON [next cursor, then 4 items per key: key, token (our layout) | raw value | [type],
 *              PTTL, meta: 0 = not read | 1 = read, none | "the metadata JSON text"]
 */
export const SCAN_BATCH_SCRIPT = `
local found = redis.call('SCAN', ARGV[1], 'MATCH', ARGV[2], 'COUNT', ARGV[3])
local keys = found[2]
local out = { found[1] }
local lockPrefix, withMeta = ARGV[4], ARGV[5] ~= ''
local plen = #lockPrefix
local maxBytes = tonumber(ARGV[6])
local share, shares = tonumber(ARGV[7]), tonumber(ARGV[8])
local n = 1
for s = 1, #keys, 1000 do
  local e = math.min(#keys, s + 999)
  local values = redis.call('MGET', unpack(keys, s, e))
  for j = s, e do
    local key = keys[j]
    local value = values[j - s + 1]
    local meta = 0
    if not value then
      local t = redis.call('TYPE', key)['ok']
      if t ~= 'none' then value = { t } end
    else
      if plen > 0 and string.sub(key, 1, plen) == lockPrefix then
        local space = string.find(value, ' ', 1, true)
        if withMeta and (shares <= 1 or (string.byte(key, -1) * 31 + string.byte(key, -2) * 7 + #key) % shares == share) then
          if space then meta = string.sub(value, space + 1) else meta = 1 end
        end
        if space then value = string.sub(value, 1, space - 1) end
      end
      if #value > maxBytes then value = string.sub(value, 1, maxBytes) end
    end
    if value then
      out[n + 1] = key
      out[n + 2] = value
      out[n + 3] = redis.call('PTTL', key)
      out[n + 4] = meta
      n = n + 4
    end
  end
end
return cjson.encode(out)
`;

const SCAN_BATCH = luaScript(SCAN_BATCH_SCRIPT);

/** SHA1 of the script, as EVALSHA wants it. */
export const SCAN_BATCH_SHA = SCAN_BATCH.sha;

/** One batch: EVALSHA_RO (EVALSHA on Redis 6), with the script's source when the node answers NOSCRIPT (script.ts readLua). */
export function runScanBatch(client: Redis, args: readonly (string | number)[]): Promise<unknown> {
  return readLua(client, SCAN_BATCH, [], args);
}
