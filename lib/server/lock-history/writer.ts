import { quorumSize } from '@redlock-console/redlock';
import 'server-only';
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { LockHistoryEntry } from '../../api/lock-history';
import { consoleKeys, digest } from '../console-keys';
import { logger } from '../logger';
import { getRuntime } from '../runtime';
import { nodeNumber } from '../../node-number';

/**
 * The lock history's writer: entries are buffered and written to a majority of the masters in
 * batches (one script call per master per FLUSH_MS, or at once past FLUSH_AT entries), so the lock service's fast
 * path pays a push into an array, not a round trip. Each entry goes, with the same id everywhere,
 * to the cluster's stream, to its principal's stream, and to one short stream per resource of it
 * and principal: a reader merges the masters by id, like the audit log, so the history survives a
 * console restart and the loss of a minority of masters.
 *
 * Bounded, because these are the lock masters (a master that runs out of memory refuses locks; one
 * that evicts is quarantined by the core), and bounded PER PRINCIPAL (one API key taking
 * ~430 locks over new resources filled the one index of 2,000 resource streams and erased every
 * other key's history): what one principal (an API key, a signed-in user) writes can push out only
 * its own entries. Retention:
 * - a principal's stream keeps its newest MAX_LEN_PER_PRINCIPAL (5,000) entries: the largest page
 *   of the log (`?principal=`), so a read by principal reaches every entry kept;
 * - a resource's history is kept per principal: the newest MAX_LEN_PER_PAIR (32) entries of each
 *   principal on it, for the MAX_RESOURCES_PER_PRINCIPAL (1,000) resources each principal wrote
 *   most recently (past that, its least recently written resource's stream goes: its own, never
 *   another principal's); a read by resource merges every principal's stream of it;
 * - the cluster's stream (the unfiltered log, newest first) keeps ~MAX_LEN (30,000) entries of everyone:
 *   a busy principal pushes the others out of that view only, not out of theirs;
 * - in time: an entry older than RETENTION_MS (a week) is trimmed when its stream is next written,
 *   and a stream or index a week without writes expires.
 * An entry is compact: metadata cut to METADATA_MAX bytes, at most RESOURCES_MAX resource names;
 * at most ~1.5 KB, typically ~300 B. Per principal, at most 1,000 × 32 + 5,000 entries (typically
 * ≈ 11 MB, at most ≈ 55 MB per master); the principals are the configured API keys and users.
 * docs/security.md and the README say so.
 *
 * Each master has its own chain of writes: a slow master never delays the others, a master that is
 * not connected is skipped (it misses those entries; the others have them), and a master's backlog
 * is capped at MAX_BACKLOG entries (the oldest dropped and counted). Never throws.
 */
const FLUSH_MS = 200;
const FLUSH_AT = 500;
const MAX_LEN = 30_000;
const MAX_LEN_PER_PRINCIPAL = 5_000;
const MAX_LEN_PER_PAIR = 32;
const MAX_RESOURCES_PER_PRINCIPAL = 1_000;
const RETENTION_MS = 7 * 24 * 60 * 60 * 1000;
const METADATA_MAX = 512;
const RESOURCES_MAX = 8;
const MAX_BACKLOG = 20_000;

/** The history's bounds, as the docs and the tests name them. */
export const LOCK_HISTORY_RETENTION = Object.freeze({
  entriesPerPrincipal: MAX_LEN_PER_PRINCIPAL,
  entriesPerResourcePerPrincipal: MAX_LEN_PER_PAIR,
  resourcesPerPrincipal: MAX_RESOURCES_PER_PRINCIPAL,
  clusterEntries: MAX_LEN,
  retentionMs: RETENTION_MS,
});

type Pending = LockHistoryEntry;

interface MasterChain {
  /** Entries handed to this master and not yet written. */
  backlog: number;
  tail: Promise<void>;
  dropped: number;
}

interface WriterState {
  buffer: Pending[];
  timer: NodeJS.Timeout | null;
  seq: number;
  /** Distinguishes this process's ids from another console's. */
  origin: string;
  chains: MasterChain[];
  /** Where the next batch's masters start (rotates). */
  turn: number;
}

const writer: WriterState = { buffer: [], timer: null, seq: 0, origin: randomBytes(4).toString('hex'), chains: [], turn: 0 };

/** One buffer per process: the lock service's routes and Next.js's route handlers import this one module. */
function state(): WriterState {
  return writer;
}

/** A token's fingerprint in the history: enough to link a grant to its release, nothing to act with. */
export function tokenFingerprint(token: string): string {
  return digest(token).slice(0, 12);
}

/** Queue one entry (id and time are given here; metadata and the resource list are cut to their bounds). */
export function recordLockHistory(entry: Omit<LockHistoryEntry, 'id' | 'at'>): void {
  const s = state();
  s.buffer.push(entryOf(entry));
  if (s.buffer.length >= FLUSH_AT) void flushLockHistory();
  else s.timer ??= setTimeout(() => void flushLockHistory(), FLUSH_MS).unref();
}

/** The entry as stored: its id and time given here, metadata and the resource list cut to their bounds. */
function entryOf(entry: Omit<LockHistoryEntry, 'id' | 'at'>): Pending {
  const s = state();
  const at = Date.now();
  // Fixed-width parts: ids of one process sort in the order they were made, as strings too.
  const id = `${at.toString(36).padStart(9, '0')}-${s.origin}-${(s.seq++ % 36 ** 6).toString(36).padStart(6, '0')}`;
  return { ...entry, id, at, resources: boundedResources(entry.resources), metadata: boundedMetadata(entry.metadata) };
}

function boundedResources(resources: readonly string[]): string[] {
  const kept = resources.slice(0, RESOURCES_MAX).map((r) => (r.length > 100 ? `${r.slice(0, 99)}…` : r));
  return resources.length > RESOURCES_MAX ? [...kept, `(+${resources.length - RESOURCES_MAX} more)`] : kept;
}

function boundedMetadata(metadata: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  let size = 2;
  for (const [key, value] of Object.entries(metadata)) {
    const v = value.length > 96 ? `${value.slice(0, 95)}…` : value;
    size += key.length + v.length + 6;
    if (size > METADATA_MAX) {
      out['…'] = 'metadata cut at 512 bytes';
      break;
    }
    out[key] = v;
  }
  return out;
}

/**
 * Hand what is buffered to the chains of a majority of the masters; resolves when those writes are
 * done (or failed). The console server's stop calls it (bounded in time there).
 *
 * A majority, not every master: any minority lost still leaves a copy of each batch (a majority
 * and a minority always leave one master outside the minority), which is what the history
 * promises, like the audit log; the readers merge every master by entry id and take the newest N
 * of each, and an entry among the newest N overall is among the newest N of each master that holds
 * it, so nothing a reader shows depends on which masters a batch went to. The masters share the
 * lock service's machine: two copies fewer of every entry is CPU the locks keep. Which masters take
 * a batch rotates among those connected; a write that fails, or a master too far behind, hands the
 * batch to the next connected master not yet written, so a batch keeps its majority while one is
 * connected.
 */
export function flushLockHistory(): Promise<void> {
  const s = state();
  if (s.timer) clearTimeout(s.timer);
  s.timer = null;
  const batch = s.buffer;
  s.buffer = [];
  const clients = safeClients();
  while (s.chains.length < clients.length) s.chains.push({ backlog: 0, tail: Promise.resolve(), dropped: 0 });
  if (batch.length > 0 && clients.length > 0) {
    const payload = payloadOf(batch);
    // Not connected now: such a master misses the batch, nothing waits for it.
    const ready = clients.flatMap((client, i) => (client.status === 'ready' ? [i] : []));
    const from = ready.length === 0 ? 0 : s.turn++ % ready.length;
    const order = [...ready.slice(from), ...ready.slice(0, from)];
    const spares = order.slice(historyCopies(clients.length));
    const write = (i: number): void => {
      const chain = s.chains[i]!;
      const next = () => {
        const spare = spares.shift();
        if (spare !== undefined) write(spare);
      };
      if (chain.backlog + batch.length > MAX_BACKLOG) {
        chain.dropped += batch.length;
        logger().warn({ node: nodeNumber(i), dropped: chain.dropped }, 'lock history: master too slow, its batch goes to another');
        return next();
      }
      chain.backlog += batch.length;
      chain.tail = chain.tail
        .then(() => writeBatch(clients[i]!, payload))
        .catch((err: unknown) => {
          logger().warn({ node: nodeNumber(i), err }, 'lock history: a batch did not reach a master, it goes to another');
          next();
        })
        .finally(() => {
          chain.backlog -= batch.length;
        });
    };
    for (const i of order.slice(0, historyCopies(clients.length))) write(i);
  }
  return Promise.all(s.chains.map((c) => c.tail)).then(() => undefined);
}

/** How many masters each batch is written to: a majority of them. */
export function historyCopies(masters: number): number {
  return quorumSize(masters);
}

function safeClients(): readonly Redis[] {
  try {
    return getRuntime().clients;
  } catch {
    return [];
  }
}

/**
 * One batch to one master: ONE script call carrying the whole batch (encoded once per flush and
 * shared by every master), not a pipeline of commands per entry. The console's one thread encoded
 * ~20 ioredis commands per lock pair before (the lock service fell from ~1,800 to ~600 pairs/s in
 * `npm run bench -- --only http-service`); now it encodes one JSON string per 200 ms.
 */
async function writeBatch(client: Redis, payload: string): Promise<void> {
  const now = Date.now();
  await client.eval(
    WRITE_BATCH,
    1,
    consoleKeys().lockHistory,
    String(MAX_LEN),
    String(MAX_LEN_PER_PAIR),
    String(RETENTION_MS),
    String(MAX_RESOURCES_PER_PRINCIPAL),
    String(now),
    payload,
    String(MAX_LEN_PER_PRINCIPAL),
    `${now - RETENTION_MS}-0`,
  );
}

/**
 * Write one entry now, on every connected master, resolved once a majority has it (the others
 * follow): the write-ahead of a force-release (lib/server/force-release.ts), which must be on the
 * masters before its first delete, not in a buffer that a crash loses. `majority` says whether it
 * got there.
 */
export async function writeLockHistoryNow(
  entry: Omit<LockHistoryEntry, 'id' | 'at'>,
): Promise<{ entry: LockHistoryEntry; majority: boolean }> {
  const full = entryOf(entry);
  const clients = safeClients();
  const needed = historyCopies(clients.length);
  const payload = payloadOf([full]);
  const majority = await new Promise<boolean>((resolve) => {
    let written = 0;
    let failed = 0;
    if (clients.length === 0) resolve(false);
    for (const client of clients) {
      (client.status === 'ready' ? writeBatch(client, payload) : Promise.reject(new Error('not connected'))).then(
        () => {
          if (++written === needed) resolve(true);
        },
        () => {
          if (++failed > clients.length - needed) resolve(false);
        },
      );
    }
  });
  return { entry: full, majority };
}

/**
 * The batch as the script reads it, per entry: its stream fields, its principal's stream and
 * resource index, and per resource its stream for this principal and the resource's index.
 */
function payloadOf(batch: readonly Pending[]): string {
  const keys = consoleKeys();
  return JSON.stringify(
    batch.map((e) => [
      fieldsOf(e),
      keys.lockHistoryOfPrincipal(e.principal),
      keys.lockHistoryResourcesOf(e.principal),
      e.resources.filter((r) => !r.startsWith('(+')).map((r) => [keys.lockHistoryOf(e.principal, r), keys.lockHistoryOfResource(r)]),
    ]),
  );
}

/**
 * KEYS[1] = the cluster stream. ARGV = its maxlen, maxlen per resource and principal, retention
 * (ms), resources kept per principal, now (ms), the batch (JSON: per entry [fields, principal
 * stream, principal's resource index, [[resource+principal stream, resource index]…]]), maxlen per
 * principal, the oldest stream id kept (now − retention).
 * Writes each entry to the cluster stream, its principal's stream and its resource+principal
 * streams (exact caps for the last two: `=`; `~` would keep ~100 entries of a stream capped at
 * 32), trims what is older than the retention, refreshes expiries and index scores, and past a
 * principal's bound deletes ITS least recently written resource streams (and takes them out of
 * their resource's index). A resource stream's key is its resource index's key + `:p:<h>`. The
 * keys are the console's own (lib/server/console-keys.ts); the masters are standalone Redis (no
 * cluster slots).
 */
const WRITE_BATCH = `
local batch = cjson.decode(ARGV[6])
local ttl, now, minid = ARGV[3], ARGV[5], ARGV[8]
local stale = tonumber(now) - tonumber(ttl)
local streams = {}
local touched = {}
for _, entry in ipairs(batch) do
  redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', unpack(entry[1]))
  redis.call('XADD', entry[2], 'MAXLEN', '=', ARGV[7], '*', unpack(entry[1]))
  streams[entry[2]] = true
  for _, pair in ipairs(entry[4]) do
    redis.call('XADD', pair[1], 'MAXLEN', '=', ARGV[2], '*', unpack(entry[1]))
    touched[pair[1]] = { entry[3], pair[2] }
  end
end
redis.call('XTRIM', KEYS[1], 'MINID', '~', minid)
for key, _ in pairs(streams) do
  redis.call('XTRIM', key, 'MINID', '~', minid)
  redis.call('PEXPIRE', key, ttl)
end
local owners = {}
for key, idx in pairs(touched) do
  redis.call('XTRIM', key, 'MINID', '~', minid)
  redis.call('PEXPIRE', key, ttl)
  redis.call('ZADD', idx[1], now, key)
  redis.call('ZADD', idx[2], now, key)
  redis.call('ZREMRANGEBYSCORE', idx[2], '-inf', stale)
  redis.call('PEXPIRE', idx[2], ttl)
  owners[idx[1]] = true
end
for owner, _ in pairs(owners) do
  redis.call('ZREMRANGEBYSCORE', owner, '-inf', stale)
  redis.call('PEXPIRE', owner, ttl)
  local over = redis.call('ZCARD', owner) - tonumber(ARGV[4])
  if over > 0 then
    local old = redis.call('ZPOPMIN', owner, over)
    for i = 1, #old, 2 do
      redis.call('DEL', old[i])
      local resource = string.match(old[i], '^(.*):p:[^:]+$')
      if resource then redis.call('ZREM', resource, old[i]) end
    end
  end
end
return #batch
`;

function fieldsOf(e: Pending): string[] {
  return [
    'id',
    e.id,
    'at',
    String(e.at),
    'event',
    e.event,
    'resources',
    JSON.stringify(e.resources),
    'token',
    e.token,
    'fence',
    e.fence === null ? '' : String(e.fence),
    'principal',
    e.principal,
    'metadata',
    JSON.stringify(e.metadata),
    'ttlMs',
    e.ttlMs === null ? '' : String(e.ttlMs),
    'expiresAt',
    e.expiresAt === null ? '' : String(e.expiresAt),
    'detail',
    e.detail,
  ];
}
