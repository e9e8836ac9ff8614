import 'server-only';
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { LockHistoryEntry } from '../../api/lock-history';
import { consoleKeys, digest } from '../console-keys';
import { logger } from '../logger';
import { getRuntime } from '../runtime';

/**
 * The lock history's writer: entries are buffered and written to a majority of the masters in
 * batches (one script call per master per FLUSH_MS, or at once past FLUSH_AT entries), so the lock service's fast
 * path pays a push into an array, not a round trip. Each entry goes to the cluster's capped stream
 * and to the short stream of each of its resources, with the same id everywhere: a reader merges
 * the masters by id, like the audit log, so the history survives a console restart and the loss of
 * a minority of masters.
 *
 * Bounded, because these are the lock masters (a master that runs out of memory refuses locks; one
 * that evicts is quarantined by the core):
 * - an entry is compact: metadata cut to METADATA_MAX bytes, at most RESOURCES_MAX resource names;
 * - the cluster stream keeps ~MAX_LEN entries, a resource's stream MAX_LEN_PER_RESOURCE;
 * - at most MAX_RESOURCES resources have a stream: an index (sorted by last write) drops the
 *   least recently written ones past it, and a stream expires a week after its last entry.
 * An entry is at most ~1.5 KB (typically ~300 B). Worst case per master: 30,000 × 1.5 KB in the
 * cluster stream + 2,000 × 32 × 1.5 KB in resource streams ≈ 140 MB; typically ≈ 30 MB.
 * docs/security.md and the README say so.
 *
 * Each master has its own chain of writes: a slow master never delays the others, a master that is
 * not connected is skipped (it misses those entries; the others have them), and a master's backlog
 * is capped at MAX_BACKLOG entries (the oldest dropped and counted). Never throws.
 */
const FLUSH_MS = 200;
const FLUSH_AT = 500;
const MAX_LEN = 30_000;
const MAX_LEN_PER_RESOURCE = 32;
const MAX_RESOURCES = 2_000;
const RESOURCE_TTL_MS = 7 * 24 * 60 * 60 * 1000;
const METADATA_MAX = 512;
const RESOURCES_MAX = 8;
const MAX_BACKLOG = 20_000;

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

const KEY = Symbol.for('redlock-console.lock-history');
type Holder = { [KEY]?: WriterState };

/** One buffer per process, on globalThis: the fast path's and Next.js's copies of this module share it. */
function state(): WriterState {
  const holder = globalThis as Holder;
  holder[KEY] ??= { buffer: [], timer: null, seq: 0, origin: randomBytes(4).toString('hex'), chains: [], turn: 0 };
  return holder[KEY];
}

/** A token's fingerprint in the history: enough to link a grant to its release, nothing to act with. */
export function tokenFingerprint(token: string): string {
  return digest(token).slice(0, 12);
}

/** Queue one entry (id and time are given here; metadata and the resource list are cut to their bounds). */
export function recordLockHistory(entry: Omit<LockHistoryEntry, 'id' | 'at'>): void {
  const s = state();
  const at = Date.now();
  // Fixed-width parts: ids of one process sort in the order they were made, as strings too.
  const id = `${at.toString(36).padStart(9, '0')}-${s.origin}-${(s.seq++ % 36 ** 6).toString(36).padStart(6, '0')}`;
  s.buffer.push({ ...entry, id, at, resources: boundedResources(entry.resources), metadata: boundedMetadata(entry.metadata) });
  if (s.buffer.length >= FLUSH_AT) void flushLockHistory();
  else s.timer ??= setTimeout(() => void flushLockHistory(), FLUSH_MS).unref();
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
        logger().warn({ node: i + 1, dropped: chain.dropped }, 'lock history: master too slow, its batch goes to another');
        return next();
      }
      chain.backlog += batch.length;
      chain.tail = chain.tail
        .then(() => writeBatch(clients[i]!, payload))
        .catch((err: unknown) => {
          logger().warn({ node: i + 1, err }, 'lock history: a batch did not reach a master, it goes to another');
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
  return Math.floor(masters / 2) + 1;
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
  const keys = consoleKeys();
  await client.eval(
    WRITE_BATCH,
    2,
    keys.lockHistory,
    keys.lockHistoryIndex,
    String(MAX_LEN),
    String(MAX_LEN_PER_RESOURCE),
    String(RESOURCE_TTL_MS),
    String(MAX_RESOURCES),
    String(Date.now()),
    payload,
  );
}

/** The batch as the script reads it: per entry, its stream fields and the keys of its resources' streams. */
function payloadOf(batch: readonly Pending[]): string {
  const keys = consoleKeys();
  return JSON.stringify(batch.map((e) => [fieldsOf(e), e.resources.filter((r) => !r.startsWith('(+')).map((r) => keys.lockHistoryOf(r))]));
}

/**
 * KEYS[1] = the cluster stream, KEYS[2] = the index of resource streams (score: last write).
 * ARGV = maxlen, maxlen per resource, resource stream ttl (ms), resource streams kept, now (ms),
 * the batch (JSON: [[fields…], [resource stream keys…]] per entry). Writes each entry to the
 * cluster stream and to its resources' streams, refreshes their ttl and index score, and deletes
 * the least recently written resource streams past the bound. The resource stream keys are the
 * console's own (lib/server/console-keys.ts); the masters are standalone Redis (no cluster slots).
 */
const WRITE_BATCH = `
local batch = cjson.decode(ARGV[6])
local touched = {}
for _, entry in ipairs(batch) do
  redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', unpack(entry[1]))
  for _, key in ipairs(entry[2]) do
    redis.call('XADD', key, 'MAXLEN', '~', ARGV[2], '*', unpack(entry[1]))
    touched[key] = true
  end
end
for key, _ in pairs(touched) do
  redis.call('PEXPIRE', key, ARGV[3])
  redis.call('ZADD', KEYS[2], ARGV[5], key)
end
local over = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[4])
if over > 0 then
  local old = redis.call('ZPOPMIN', KEYS[2], over)
  for i = 1, #old, 2 do redis.call('DEL', old[i]) end
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
