import 'server-only';
import { randomBytes } from 'node:crypto';
import type { LockHistoryEntry } from '../../api/lock-history';
import { ensureReady } from '../../inspect';
import { consoleKeys, digest } from '../console-keys';
import { logger } from '../logger';
import { getRuntime } from '../runtime';

/**
 * The lock history's writer: entries are buffered and written to every master in batches (one
 * pipeline per master per FLUSH_MS, or at once past FLUSH_AT entries), so the lock service's fast
 * path pays a push into an array, not a round trip. Each entry goes to the cluster's capped stream
 * and to the short stream of each of its resources (what a lock's detail page reads), with the
 * same id everywhere: a reader merges the masters by id, like the audit log, so the history
 * survives a console restart and the loss of a minority of masters. Never throws: a batch that
 * reached no master is logged. What is still buffered when the process stops is written by
 * flushLockHistory() (the console server's stop calls it); a crash loses at most FLUSH_MS of it.
 */
const FLUSH_MS = 200;
const FLUSH_AT = 500;
const MAX_LEN = 100_000;
const MAX_LEN_PER_RESOURCE = 200;
const RESOURCE_TTL_MS = 7 * 24 * 60 * 60 * 1000;

type Pending = LockHistoryEntry;

interface WriterState {
  buffer: Pending[];
  timer: NodeJS.Timeout | null;
  seq: number;
  /** Distinguishes this process's ids from another console's. */
  origin: string;
  inFlight: Promise<void>;
}

const KEY = Symbol.for('redlock-console.lock-history');
type Holder = { [KEY]?: WriterState };

/** One buffer per process, on globalThis: the fast path's and Next.js's copies of this module share it. */
function state(): WriterState {
  const holder = globalThis as Holder;
  holder[KEY] ??= { buffer: [], timer: null, seq: 0, origin: randomBytes(4).toString('hex'), inFlight: Promise.resolve() };
  return holder[KEY];
}

/** A token's fingerprint in the history: enough to link a grant to its release, nothing to act with. */
export function tokenFingerprint(token: string): string {
  return digest(token).slice(0, 12);
}

/** Queue one entry (id and time are given here). */
export function recordLockHistory(entry: Omit<LockHistoryEntry, 'id' | 'at'>): void {
  const s = state();
  const at = Date.now();
  s.buffer.push({ id: `${at.toString(36)}-${s.origin}-${(s.seq++).toString(36)}`, at, ...entry });
  if (s.buffer.length >= FLUSH_AT) void flushLockHistory();
  else s.timer ??= setTimeout(() => void flushLockHistory(), FLUSH_MS).unref();
}

/** Write what is buffered now (and wait for the writes before it); resolves when every master answered or failed. */
export function flushLockHistory(): Promise<void> {
  const s = state();
  if (s.timer) clearTimeout(s.timer);
  s.timer = null;
  const batch = s.buffer;
  s.buffer = [];
  if (batch.length > 0) s.inFlight = s.inFlight.then(() => writeBatch(batch));
  return s.inFlight;
}

async function writeBatch(batch: readonly Pending[]): Promise<void> {
  const keys = consoleKeys();
  const results = await Promise.allSettled(
    getRuntime().clients.map(async (client) => {
      await ensureReady(client, 1_000);
      const pipeline = client.pipeline();
      for (const entry of batch) {
        const fields = fieldsOf(entry);
        pipeline.xadd(keys.lockHistory, 'MAXLEN', '~', String(MAX_LEN), '*', ...fields);
        for (const resource of entry.resources) {
          const key = keys.lockHistoryOf(resource);
          pipeline.xadd(key, 'MAXLEN', '~', String(MAX_LEN_PER_RESOURCE), '*', ...fields);
          pipeline.pexpire(key, RESOURCE_TTL_MS);
        }
      }
      const replies = (await pipeline.exec()) ?? [];
      const failed = replies.find(([err]) => err);
      if (failed) throw failed[0]!;
    }),
  );
  if (!results.some((r) => r.status === 'fulfilled')) logger().error({ entries: batch.length }, 'lock history batch reached no master');
}

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
