import 'server-only';
import {
  LOCK_HISTORY_EVENTS,
  type LockHistoryEntry,
  type LockHistoryEvent,
  type LockHistoryResponse,
  type LockHold,
  type LockServiceLogResponse,
} from '../../api/lock-history';
import type { Redis } from 'ioredis';
import { AUDIT_INCOMPLETE } from '../../api/audit';
import { ensureReady, lockDetail } from '../../inspect';
import { consoleKeys } from '../console-keys';
import { getRuntime } from '../runtime';
import { tokenFingerprint } from './writer';

/**
 * A resource's history: its streams (one per principal that wrote it: lock-history/writer.ts)
 * read from every master that answers, merged by entry id (every master has the same entries,
 * save those a master missed while it was down), newest first, and the holds derived from it: a
 * grant, its extends, and how it ended — released, force-released, or expired (no release recorded
 * before its last lease ran out). One principal's volume cannot push another's entries out of it.
 */
export async function readLockHistory(resource: string, limit: number, now = Date.now()): Promise<LockHistoryResponse> {
  const key = consoleKeys().lockHistoryOfResource(resource);
  const [{ entries, nodesRead, nodesFailed }, current] = await Promise.all([
    readEveryMaster((c) => c.eval(READ_RESOURCE, 1, key, String(PER_STREAM), String(STREAMS_PER_RESOURCE)) as Promise<string[][]>),
    currentHolds(resource),
  ]);
  return {
    resource,
    holds: holdsOf(entries, now, current).slice(0, limit),
    entries: entries.slice(0, limit * 4),
    nodesRead,
    nodesFailed,
  };
}

/** A hold the masters show now: its token's fingerprint, the holder's metadata, when it was read. */
export interface CurrentHold {
  token: string;
  meta: Readonly<Record<string, string>>;
  seenAt: number;
}

/**
 * The holds on the resource's keys now, by whatever client took them (a lock held for
 * minutes by a client of the package, outside the lock service, had no history at all, or "held
 * for 0 ms" once force-released). One per token on a node that could be read. Never throws: the
 * keys are read best effort, the history stands without them.
 */
async function currentHolds(resource: string): Promise<CurrentHold[]> {
  try {
    const runtime = getRuntime();
    const detail = await lockDetail(runtime.clients, resource, {
      keyPrefix: runtime.keyPrefix,
      configuredNodes: runtime.endpoints.length,
      driftFactor: runtime.driftFactor,
      maxTtlMs: runtime.maxTtlMs,
    });
    const byToken = new Map<string, CurrentHold>();
    for (const cell of detail.view?.cells ?? []) {
      if (!cell.known || !cell.present || cell.token === null || byToken.has(cell.token)) continue;
      byToken.set(cell.token, { token: tokenFingerprint(cell.token), meta: cell.meta ?? {}, seenAt: detail.readAt });
    }
    return [...byToken.values()];
  } catch {
    return [];
  }
}

/** Entries read per stream of a resource (each keeps 32: writer.ts), and how many principals' streams of one resource. */
const PER_STREAM = 64;
const STREAMS_PER_RESOURCE = 64;

/**
 * KEYS[1] = a resource's index of streams (one per principal); ARGV = entries per stream, streams.
 * Every entry (its flat fields) of its most recently written streams, newest first per stream.
 */
const READ_RESOURCE = `
local out = {}
for _, key in ipairs(redis.call('ZREVRANGE', KEYS[1], 0, tonumber(ARGV[2]) - 1)) do
  for _, row in ipairs(redis.call('XREVRANGE', key, '+', '-', 'COUNT', ARGV[1])) do
    out[#out + 1] = row[2]
  end
end
return out
`;

/**
 * The lock service's log across resources, newest first: the cluster's stream (everyone's newest),
 * or one principal's own stream (an API key's entries by its name: `client:<name>`), which keeps
 * that principal's newest 5,000 — the largest page — whatever the others write.
 */
export async function readLockServiceLog(filter: { principal?: string; limit: number }): Promise<LockServiceLogResponse> {
  const keys = consoleKeys();
  const key = filter.principal ? keys.lockHistoryOfPrincipal(filter.principal) : keys.lockHistory;
  const read = await readEveryMaster(async (c) => (await c.xrevrange(key, '+', '-', 'COUNT', filter.limit)).map(([, flat]) => flat));
  const entries = read.entries.filter((e) => !filter.principal || e.principal === filter.principal).slice(0, filter.limit);
  return { entries, nodesRead: read.nodesRead, nodesFailed: read.nodesFailed };
}

/** Rows (flat fields) from every master that answers, merged by entry id, newest first. */
async function readEveryMaster(
  read: (client: Redis) => Promise<string[][]>,
): Promise<{ entries: LockHistoryEntry[]; nodesRead: number; nodesFailed: number }> {
  const clients = getRuntime().clients;
  const results = await Promise.allSettled(
    clients.map(async (c) => {
      await ensureReady(c, 1_000);
      return read(c);
    }),
  );
  const byId = new Map<string, LockHistoryEntry>();
  let nodesRead = 0;
  for (const r of results) {
    if (r.status !== 'fulfilled') continue;
    nodesRead++;
    for (const flat of r.value) {
      const entry = parseEntry(flat);
      if (entry) byId.set(entry.id, entry);
    }
  }
  const entries = [...byId.values()].sort((a, b) => b.at - a.at || (a.id < b.id ? 1 : -1));
  return { entries, nodesRead, nodesFailed: clients.length - nodesRead };
}

/**
 * The holds in `entries` (newest first in, newest first out), with the holds the masters show now
 * (`current`): a hold whose grant the history does not have (a client of the package outside the
 * lock service, or a grant pushed out) takes its grant time from the holder's own `acquiredAt`
 * (its key's metadata, kept in the force-release's entry too), else from when it was first seen,
 * and says which (`grantTime`); never "held for 0 ms" from its own force-release.
 */
export function holdsOf(entries: readonly LockHistoryEntry[], now: number, current: readonly CurrentHold[] = []): LockHold[] {
  const byToken = new Map<string, LockHistoryEntry[]>();
  for (const e of [...entries].reverse()) {
    const list = byToken.get(e.token) ?? [];
    list.push(e);
    byToken.set(e.token, list);
  }
  const holds: LockHold[] = [];
  const onKeys = new Map(current.map((c) => [c.token, c]));
  for (const c of current) {
    if (byToken.has(c.token)) continue;
    const claims = holderClaims(c.meta);
    holds.push({
      token: c.token,
      grantSeen: false,
      principal: null,
      metadata: claims,
      fence: numberOf(c.meta.fence),
      ...grantTimeOf(claims, c.seenAt),
      endedAt: null,
      ended: 'held',
      extensions: numberOf(c.meta.extensions) ?? 0,
    });
  }
  for (const [token, list] of byToken) {
    const granted = list.find((e) => e.event === 'granted') ?? null;
    // Without the grant: what the holder's key said of itself (on the keys now, or kept by a force-release's entry).
    const claims = granted
      ? null
      : { ...Object.assign({}, ...list.map((e) => holderClaims(e.metadata))), ...holderClaims(onKeys.get(token)?.meta ?? {}) };
    const end =
      [...list.filter((e) => e.event === 'released').map((e) => ({ event: e.event, at: e.at })), ...forceReleaseEnds(list)].sort(
        (a, b) => a.at - b.at,
      )[0] ?? null;
    const leases = list.map((e) => e.expiresAt).filter((t): t is number => t !== null);
    const lastLease = leases.length > 0 ? Math.max(...leases) : null;
    // A release after the lease ran out ended nothing: the hold had expired by then.
    const endedInTime = end !== null && (lastLease === null || end.at <= lastLease);
    const ended: LockHold['ended'] = endedInTime
      ? (end.event as 'released' | 'force-released')
      : lastLease !== null && lastLease <= now
        ? 'expired'
        : 'held';
    const counted = list.filter((e) => e.event === 'extended').length;
    holds.push({
      token,
      grantSeen: granted !== null,
      principal: granted?.principal ?? null,
      metadata: granted?.metadata ?? claims ?? {},
      fence: granted?.fence ?? numberOf(claims?.fence),
      ...(granted ? { grantedAt: granted.at, grantTime: 'recorded' as const } : grantTimeOf(claims ?? {}, list[0]!.at)),
      endedAt: endedInTime ? end.at : ended === 'expired' ? lastLease : null,
      ended,
      extensions: Math.max(counted, numberOf(claims?.extensions) ?? 0),
    });
  }
  return holds.sort((a, b) => b.grantedAt - a.grantedAt);
}

/** What a holder's key says of it that the history keeps (its own words, never a principal). */
export const HOLDER_CLAIMS = ['owner', 'host', 'pid', 'acquiredAt', 'extensions', 'fence'] as const;

export function holderClaims(meta: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of HOLDER_CLAIMS) if (typeof meta[k] === 'string' && meta[k] !== '') out[k] = meta[k];
  return out;
}

function grantTimeOf(claims: Readonly<Record<string, string>>, firstSeen: number): Pick<LockHold, 'grantedAt' | 'grantTime'> {
  const at = numberOf(claims.acquiredAt);
  // The holder's clock, unless it reads after the console first saw the hold (then it is wrong).
  return at !== null && at > 0 && at <= firstSeen
    ? { grantedAt: at, grantTime: 'holder-clock' }
    : { grantedAt: firstSeen, grantTime: 'first-seen' };
}

function numberOf(text: string | undefined): number | null {
  if (text === undefined || text === '') return null;
  const n = Number(text);
  return Number.isFinite(n) ? n : null;
}

/** The outcome a force-release's write-ahead history entry carries until its completion. */
export const FORCE_RELEASE_INCOMPLETE = AUDIT_INCOMPLETE;

/**
 * A force-release is written ahead (`incomplete (audit <id>): <reason>`, before its first delete:
 * lib/server/force-release.ts) and completed (`<outcome> (audit <id>): <reason>`). Per attempt,
 * the completion says how it ended; an attempt that deleted nothing ended nothing; one whose
 * console stopped before its completion counts as force-released (its deletes may have run). An
 * attempt ended the hold when it began.
 */
function forceReleaseEnds(list: readonly LockHistoryEntry[]): Array<{ event: 'force-released'; at: number }> {
  const attempts = new Map<string, { at: number; outcome: string }>();
  for (const e of list) {
    if (e.event !== 'force-released') continue;
    const m = /^([\w-]+)(?: \(audit ([^)]+)\))?: /.exec(e.detail);
    const attempt = m?.[2] ?? e.id;
    const outcome = m?.[1] ?? 'ok';
    const seen = attempts.get(attempt);
    attempts.set(attempt, {
      at: Math.min(seen?.at ?? e.at, e.at),
      outcome: seen && outcome === FORCE_RELEASE_INCOMPLETE ? seen.outcome : outcome,
    });
  }
  return [...attempts.values()].filter((a) => a.outcome !== 'nothing-deleted').map((a) => ({ event: 'force-released', at: a.at }));
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
