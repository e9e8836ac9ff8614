import 'server-only';
import {
  LOCK_HISTORY_EVENTS,
  type LockHistoryEntry,
  type LockHistoryEvent,
  type LockHistoryResponse,
  type LockHold,
  type LockServiceLogResponse,
} from '../../api/lock-history';
import { ensureReady } from '../../inspect';
import { consoleKeys } from '../console-keys';
import { getRuntime } from '../runtime';

/**
 * A resource's history: its short stream read from every master that answers, merged by entry id
 * (every master has the same entries, save those a master missed while it was down), newest
 * first, and the holds derived from it: a grant, its extends, and how it ended — released,
 * force-released, or expired (no release recorded before its last lease ran out).
 */
export async function readLockHistory(resource: string, limit: number, now = Date.now()): Promise<LockHistoryResponse> {
  // Entries per hold: a grant, a release, and a few extends; read enough for `limit` holds.
  // A resource's stream is short (32 entries): read it whole.
  const { entries, nodesRead, nodesFailed } = await readStream(consoleKeys().lockHistoryOf(resource), 64);
  return { resource, holds: holdsOf(entries, now).slice(0, limit), entries: entries.slice(0, limit * 4), nodesRead, nodesFailed };
}

/**
 * The lock service's log across resources, newest first, optionally one principal's (an API key's
 * entries by its name). Filtering reads at most 5,000 of the newest entries per master: an older
 * entry of a quiet key may be out of reach, never wrongly attributed.
 */
export async function readLockServiceLog(filter: { principal?: string; limit: number }): Promise<LockServiceLogResponse> {
  const count = filter.principal ? Math.min(5_000, filter.limit * 10) : filter.limit;
  const read = await readStream(consoleKeys().lockHistory, count);
  const entries = read.entries.filter((e) => !filter.principal || e.principal === filter.principal).slice(0, filter.limit);
  return { entries, nodesRead: read.nodesRead, nodesFailed: read.nodesFailed };
}

/** A stream from every master that answers, merged by entry id, newest first. */
async function readStream(key: string, count: number): Promise<{ entries: LockHistoryEntry[]; nodesRead: number; nodesFailed: number }> {
  const clients = getRuntime().clients;
  const results = await Promise.allSettled(
    clients.map(async (c) => {
      await ensureReady(c, 1_000);
      return c.xrevrange(key, '+', '-', 'COUNT', count);
    }),
  );
  const byId = new Map<string, LockHistoryEntry>();
  let nodesRead = 0;
  for (const r of results) {
    if (r.status !== 'fulfilled') continue;
    nodesRead++;
    for (const [, flat] of r.value) {
      const entry = parseEntry(flat);
      if (entry) byId.set(entry.id, entry);
    }
  }
  const entries = [...byId.values()].sort((a, b) => b.at - a.at || (a.id < b.id ? 1 : -1));
  return { entries, nodesRead, nodesFailed: clients.length - nodesRead };
}

/** The holds in `entries` (newest first in, newest first out). */
export function holdsOf(entries: readonly LockHistoryEntry[], now: number): LockHold[] {
  const byToken = new Map<string, LockHistoryEntry[]>();
  for (const e of [...entries].reverse()) {
    const list = byToken.get(e.token) ?? [];
    list.push(e);
    byToken.set(e.token, list);
  }
  const holds: LockHold[] = [];
  for (const [token, list] of byToken) {
    const granted = list.find((e) => e.event === 'granted') ?? null;
    const end = list.find((e) => e.event === 'released' || e.event === 'force-released') ?? null;
    const leases = list.map((e) => e.expiresAt).filter((t): t is number => t !== null);
    const lastLease = leases.length > 0 ? Math.max(...leases) : null;
    // A release after the lease ran out ended nothing: the hold had expired by then.
    const endedInTime = end !== null && (lastLease === null || end.at <= lastLease);
    const ended: LockHold['ended'] = endedInTime
      ? (end.event as 'released' | 'force-released')
      : lastLease !== null && lastLease <= now
        ? 'expired'
        : 'held';
    holds.push({
      token,
      grantSeen: granted !== null,
      principal: granted?.principal ?? null,
      metadata: granted?.metadata ?? {},
      fence: granted?.fence ?? null,
      grantedAt: granted?.at ?? list[0]!.at,
      endedAt: endedInTime ? end.at : ended === 'expired' ? lastLease : null,
      ended,
      extensions: list.filter((e) => e.event === 'extended').length,
    });
  }
  return holds.sort((a, b) => b.grantedAt - a.grantedAt);
}

function parseEntry(flat: string[]): LockHistoryEntry | null {
  const f: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) f[flat[i]!] = flat[i + 1]!;
  if (!f.id || !(LOCK_HISTORY_EVENTS as readonly string[]).includes(f.event ?? '')) return null;
  return {
    id: f.id,
    at: Number(f.at),
    event: f.event as LockHistoryEvent,
    resources: parseJson<string[]>(f.resources, []),
    token: f.token ?? '',
    fence: f.fence ? Number(f.fence) : null,
    principal: f.principal ?? '',
    metadata: parseJson<Record<string, string>>(f.metadata, {}),
    ttlMs: f.ttlMs ? Number(f.ttlMs) : null,
    expiresAt: f.expiresAt ? Number(f.expiresAt) : null,
    detail: f.detail ?? '',
  };
}

function parseJson<T>(text: string | undefined, fallback: T): T {
  if (!text) return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}
