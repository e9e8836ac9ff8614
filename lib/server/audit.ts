import { quorumSize } from '@redlock-console/redlock';
import 'server-only';
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { AUDIT_INCOMPLETE, auditViaSchema, type AuditAction, type AuditEntry, type AuditVia } from '../api/audit';
import { logger } from './logger';
import { ensureReady } from '../inspect';
import { consoleKeys, digest } from './console-keys';
import { getRuntime } from './runtime';
import { runScript, script } from './auth/redis-script';

export type AuditInput = Omit<AuditEntry, 'id' | 'at' | 'reason' | 'before' | 'after' | 'detail' | 'count' | 'action'> &
  Partial<Pick<AuditEntry, 'reason' | 'before' | 'after' | 'detail' | 'holder' | 'via'>> & { action: AuditAction };

const MAX_LEN = 100_000;
/** Viewers' sign-ins and sign-outs: a stream of their own, capped apart. */
const VIEWER_SESSIONS_MAX_LEN = 10_000;
const SESSION_ACTIONS: ReadonlySet<AuditAction> = new Set(['login', 'logout', 'logout.everywhere']);

/**
 * Where an entry goes. A viewer's sign-in and sign-out are not the operators' actions, and a viewer
 * chooses how many there are (a script signing in and out wrote 7 entries a second into the
 * operators' stream): they go to a stream of their own, capped apart, so no amount of them can push
 * the operators' history out. Both are read and merged by readAudit.
 */
function streamOf(input: Pick<AuditInput, 'action' | 'role'>): string {
  const keys = consoleKeys();
  return input.role === 'viewer' && SESSION_ACTIONS.has(input.action) ? keys.auditViewerSessions : keys.audit;
}

function fieldsOf(entry: AuditEntry, phase: 'intent' | 'done' | null): string[] {
  return [
    'id',
    entry.id,
    'at',
    String(entry.at),
    'actor',
    entry.actor,
    'role',
    entry.role,
    'action',
    entry.action,
    'target',
    entry.target,
    'reason',
    entry.reason,
    'outcome',
    entry.outcome,
    'before',
    entry.before === null ? '' : JSON.stringify(entry.before),
    'after',
    entry.after === null ? '' : JSON.stringify(entry.after),
    'detail',
    entry.detail,
    ...(entry.holder === undefined ? [] : ['holder', entry.holder]),
    ...(entry.via === undefined ? [] : ['via', JSON.stringify(entry.via)]),
    ...(phase === null ? [] : ['phase', phase]),
  ];
}

function newEntry(input: AuditInput): AuditEntry {
  return { id: randomUUID(), at: Date.now(), reason: '', before: null, after: null, detail: '', ...input };
}

/**
 * Append one entry to the `rl:audit` stream on EVERY master (same id everywhere), so the log
 * survives a console restart and the loss of any minority of nodes. Never throws: an audit write
 * that reached no node is logged and reported in the result.
 */
export async function recordAudit(input: AuditInput): Promise<{ entry: AuditEntry; nodesWritten: number; nodesFailed: number }> {
  const entry = newEntry(input);
  const { written, failed } = await appendEverywhere(streamOf(input), fieldsOf(entry, null), 'all');
  if (written === 0) logger().error({ entry }, 'audit entry reached no node');
  return { entry, nodesWritten: written, nodesFailed: failed };
}

/**
 * Write-ahead for a destructive action: the entry `id` — who, what, on whom, why — with
 * the outcome `incomplete`, appended on every master, resolved once a MAJORITY of them has it (a slow
 * master does not hold the action; its copy follows). The caller acts only when `majority` is
 * true, then records the end with completeAudit (same id): a console that dies in between leaves
 * this entry, which the Audit screen shows as incomplete, never nothing.
 */
export async function beginAudit(id: string, input: AuditInput): Promise<{ entry: AuditEntry; majority: boolean }> {
  const entry = { ...newEntry({ ...input, outcome: AUDIT_INCOMPLETE }), id };
  const { written, majority } = await appendEverywhere(streamOf(input), fieldsOf(entry, 'intent'), 'majority');
  if (written === 0) logger().error({ entry }, 'write-ahead audit entry reached no node');
  return { entry, majority };
}

/** The end of an action begun with beginAudit: the same entry (id, time, actor…) with its outcome and results. */
export async function completeAudit(
  begun: AuditEntry,
  end: Pick<AuditEntry, 'outcome'> & Partial<Pick<AuditEntry, 'before' | 'after' | 'detail'>>,
): Promise<{ entry: AuditEntry; nodesWritten: number; nodesFailed: number }> {
  const entry: AuditEntry = { ...begun, ...end };
  const { written, failed } = await appendEverywhere(streamOf(entry as AuditInput), fieldsOf(entry, 'done'), 'all');
  if (written === 0) logger().error({ entry }, 'audit completion reached no node');
  return { entry, nodesWritten: written, nodesFailed: failed };
}

/**
 * XADD `fields` to `key` on every master; resolves when every master has answered ('all') or as
 * soon as a majority has the entry ('majority'; the rest are still written, in order after it on
 * each master's connection).
 */
function appendEverywhere(
  key: string,
  fields: string[],
  until: 'all' | 'majority',
): Promise<{ written: number; failed: number; majority: boolean }> {
  const clients = getRuntime().clients;
  const needed = quorumSize(clients.length);
  return new Promise((resolve) => {
    let written = 0;
    let failed = 0;
    let done = false;
    const settle = () => {
      if (done) return;
      if (written + failed === clients.length || (until === 'majority' && written >= needed)) {
        done = true;
        resolve({ written, failed, majority: written >= needed });
      }
    };
    if (clients.length === 0) settle();
    for (const c of clients) {
      ensureReady(c, 1_000)
        .then(() => c.xadd(key, 'MAXLEN', '~', String(key === consoleKeys().audit ? MAX_LEN : VIEWER_SESSIONS_MAX_LEN), '*', ...fields))
        .then(
          () => {
            written++;
            settle();
          },
          () => {
            failed++;
            settle();
          },
        );
    }
  });
}

export interface AuditFilter {
  actor?: string;
  action?: string;
  since?: number;
  limit: number;
}

/**
 * Failed logins are anonymous traffic: an attacker chooses how many there are, which username
 * they name and (behind a trusted proxy) from where. They never go to the operators' stream (so
 * no amount of them can push its history out), but to a stream of their own, capped apart, as one
 * entry per address + username + 10-minute window that counts its attempts (a hash beside it).
 * Past 10 usernames from one address in a window, the rest fold into one `*` entry.
 */
export const FAILED_LOGIN_WINDOW_MS = 10 * 60_000;
const FAILED_LOGIN_FOLD = 10;
const FAILED_LOGIN_MAX_LEN = 10_000;
const FAILED_LOGIN_TTL_MS = 30 * 24 * 60 * 60 * 1000;

/**
 * A wrong password (`failed`) or an attempt the login limits refused (`refused`), counted in its
 * window. A wrong password is written at once (each one cost a scrypt). Refusals are what a flood
 * is made of, and cost nothing else: they are counted here and written once a second, one script
 * call per address and master carrying every username's count (a script with its text
 * per refusal per master took ~1 s of the console's CPU in 10 s of 50 refused logins a second).
 * readAudit writes what is pending first; a console that dies loses at most a second of them.
 */
export async function recordFailedLogin(input: { address: string; username: string; kind: 'failed' | 'refused' }): Promise<void> {
  if (input.kind === 'failed') return writeFailedLogins(input.address, 'failed', new Map([[input.username, 1]]));
  const buffer = refusals();
  let byUser = buffer.pending.get(input.address);
  if (!byUser) {
    byUser = new Map();
    buffer.pending.set(input.address, byUser);
  }
  // Past the fold, a flood's new usernames are counted under `*` here already.
  const username = byUser.has(input.username) || byUser.size < FAILED_LOGIN_FOLD ? input.username : '*';
  byUser.set(username, (byUser.get(username) ?? 0) + 1);
  if (buffer.pending.size >= REFUSALS_MAX_ADDRESSES) void flushFailedLogins();
  else buffer.timer ??= setTimeout(() => void flushFailedLogins(), REFUSALS_FLUSH_MS).unref();
}

const REFUSALS_FLUSH_MS = 1_000;
const REFUSALS_MAX_ADDRESSES = 10_000;
type RefusalBuffer = { pending: Map<string, Map<string, number>>; timer: NodeJS.Timeout | null };
const buffered: RefusalBuffer = { pending: new Map(), timer: null };

function refusals(): RefusalBuffer {
  return buffered;
}

/** Write the refusals counted so far (readAudit does, first). */
export async function flushFailedLogins(): Promise<void> {
  const buffer = refusals();
  if (buffer.timer) clearTimeout(buffer.timer);
  buffer.timer = null;
  const pending = buffer.pending;
  buffer.pending = new Map();
  await Promise.all([...pending].map(([address, byUser]) => writeFailedLogins(address, 'refused', byUser)));
}

async function writeFailedLogins(address: string, kind: 'failed' | 'refused', byUser: ReadonlyMap<string, number>): Promise<void> {
  const now = Date.now();
  const window = Math.floor(now / FAILED_LOGIN_WINDOW_MS);
  const keys = consoleKeys();
  const folded = keys.failedLoginWindow([address, '*'], window);
  const users = [...byUser];
  const scriptKeys = [
    keys.failedLoginUsers(address, window),
    folded,
    keys.auditLoginFailures,
    ...users.map(([username]) => (username === '*' ? folded : keys.failedLoginWindow([address, username], window))),
  ];
  const args = [
    String(now),
    String(FAILED_LOGIN_TTL_MS),
    String(FAILED_LOGIN_FOLD),
    String(FAILED_LOGIN_MAX_LEN),
    kind,
    `login-failed-${digest(address, '*', String(window))}`,
    address,
    ...users.flatMap(([username, count]) => [username, String(count), `login-failed-${digest(address, username, String(window))}`]),
  ];
  const results = await Promise.allSettled(
    getRuntime().clients.map(async (c) => {
      await ensureReady(c, 1_000);
      return runScript(c, RECORD_FAILED_LOGINS, scriptKeys, args);
    }),
  );
  if (!results.some((r) => r.status === 'fulfilled'))
    logger().error({ address, kind, usernames: users.length }, 'failed-login audit reached no node');
}

/**
 * KEYS: the address's usernames this window (set), the address+`*` hash, the failed-login stream,
 * then each username's address+username hash. ARGV: now, ttl, fold, maxlen, kind, `*` id, address,
 * then per username: the username (`*`: already folded), its count, its entry id.
 * Counts each username's attempts; the first of its window also adds the stream entry.
 */
const RECORD_FAILED_LOGINS = script(`
for i = 1, #KEYS - 3 do
  local base = 7 + 3 * (i - 1)
  local username, count = ARGV[base + 1], ARGV[base + 2]
  local target, agg, id = username, KEYS[3 + i], ARGV[base + 3]
  if username == '*' then
    target, agg, id = '*', KEYS[2], ARGV[6]
  elseif redis.call('SISMEMBER', KEYS[1], username) == 0 then
    if redis.call('SCARD', KEYS[1]) >= tonumber(ARGV[3]) then
      target, agg, id = '*', KEYS[2], ARGV[6]
    else
      redis.call('SADD', KEYS[1], username)
      redis.call('PEXPIRE', KEYS[1], ARGV[2])
    end
  end
  redis.call('HINCRBY', agg, ARGV[5], count)
  redis.call('HSET', agg, 'last', ARGV[1])
  if redis.call('HSETNX', agg, 'first', ARGV[1]) == 1 then
    redis.call('PEXPIRE', agg, ARGV[2])
    redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[4], '*', 'id', id, 'at', ARGV[1], 'actor', 'anonymous', 'role', 'anonymous',
      'action', 'login.failed', 'target', target, 'reason', '', 'outcome', 'denied', 'before', '', 'after', '', 'detail', ARGV[7], 'agg', agg)
  end
end
return #KEYS - 3
`);

/**
 * Read the three streams (operators', viewers' sessions, failed logins) from every reachable
 * master, merge, de-duplicate by id, newest first. Of one id, a completed entry wins over its
 * write-ahead (beginAudit); of two aggregates, the largest count.
 */
export async function readAudit(filter: AuditFilter): Promise<{ entries: AuditEntry[]; nodesRead: number; nodesFailed: number }> {
  await flushFailedLogins();
  const keys = consoleKeys();
  const clients = getRuntime().clients;
  // Read more than the limit per node when filtering, so filtered pages are not starved.
  const count = filter.actor || filter.action ? Math.min(MAX_LEN, filter.limit * 20) : filter.limit;
  const results = await Promise.allSettled(
    clients.map(async (c) => {
      await ensureReady(c, 1_000);
      const [operators, viewers, failures] = await Promise.all([
        readNode(c, keys.audit, filter.since, count),
        readNode(c, keys.auditViewerSessions, filter.since, Math.min(count, VIEWER_SESSIONS_MAX_LEN)),
        readNode(c, keys.auditLoginFailures, filter.since, Math.min(count, FAILED_LOGIN_MAX_LEN)),
      ]);
      return [...operators, ...viewers, ...failures];
    }),
  );
  const byId = new Map<string, { entry: AuditEntry; done: boolean }>();
  let nodesRead = 0;
  for (const r of results) {
    if (r.status !== 'fulfilled') continue;
    nodesRead++;
    for (const e of r.value) {
      const seen = byId.get(e.entry.id);
      if (!seen || (e.done && !seen.done) || (e.done === seen.done && (e.entry.count ?? 0) > (seen.entry.count ?? 0)))
        byId.set(e.entry.id, e);
    }
  }
  const entries = [...byId.values()]
    .map((e) => e.entry)
    .filter(
      (e) =>
        (!filter.actor || e.actor === filter.actor) &&
        (!filter.action || e.action === filter.action || e.action.startsWith(`${filter.action}.`)),
    )
    .sort((a, b) => b.at - a.at || (a.id < b.id ? 1 : -1))
    .slice(0, filter.limit);
  return { entries, nodesRead, nodesFailed: clients.length - nodesRead };
}

/** A stream's entries on one master; `done`: not a write-ahead whose end is still to come (or never came). */
async function readNode(
  client: Redis,
  key: string,
  since: number | undefined,
  count: number,
): Promise<Array<{ entry: AuditEntry; done: boolean }>> {
  const rows = await client.xrevrange(key, '+', since === undefined ? '-' : `${since}-0`, 'COUNT', count);
  const fields = rows.map(([, flat]) => {
    const f: Record<string, string> = {};
    for (let i = 0; i + 1 < flat.length; i += 2) f[flat[i]!] = flat[i + 1]!;
    return f;
  });
  // Aggregated entries: their counts, as this node has them now.
  const aggregated = fields.filter((f) => f.agg);
  const counts =
    aggregated.length === 0
      ? []
      : ((await aggregated.reduce((p, f) => p.hmget(f.agg!, 'failed', 'refused', 'first', 'last'), client.pipeline()).exec()) ?? []);
  const countOf = new Map(aggregated.map((f, i) => [f, counts[i]?.[1] as Array<string | null> | undefined]));
  return fields.map((f) => {
    const entry: AuditEntry = {
      id: f.id ?? '',
      at: Number(f.at),
      actor: f.actor ?? '',
      role: f.role ?? '',
      action: f.action ?? '',
      target: f.target ?? '',
      reason: f.reason ?? '',
      outcome: f.outcome ?? '',
      before: parseJson(f.before),
      after: parseJson(f.after),
      detail: f.detail ?? '',
      ...(f.holder ? { holder: f.holder } : {}),
      ...(f.via ? { via: parseVia(f.via) } : {}),
    };
    const agg = countOf.get(f);
    if (f.agg) {
      const [failed, refused, first, last] = (agg ?? []).map((v) => Number(v ?? 0));
      entry.count = (failed ?? 0) + (refused ?? 0);
      entry.detail =
        `${failed ?? 0} wrong password(s)${refused ? `, ${refused} refused by the login limit` : ''} from ${f.detail}` +
        (first && last ? ` between ${new Date(first).toISOString()} and ${new Date(last).toISOString()}` : '');
    }
    return { entry, done: f.phase !== 'intent' };
  });
}

function parseVia(value: string): AuditVia | undefined {
  const parsed = auditViaSchema.safeParse(parseJson(value));
  return parsed.success ? parsed.data : undefined;
}

function parseJson(value: string | undefined): unknown {
  if (!value) return null;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}
