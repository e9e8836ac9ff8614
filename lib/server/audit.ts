import 'server-only';
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { AuditEntry } from '../api/audit';
import { logger } from './logger';
import { ensureReady } from '../inspect';
import { consoleKeys } from './console-keys';
import { getRuntime } from './runtime';

export type AuditInput = Omit<AuditEntry, 'id' | 'at' | 'reason' | 'before' | 'after' | 'detail'> &
  Partial<Pick<AuditEntry, 'reason' | 'before' | 'after' | 'detail'>>;

const MAX_LEN = 100_000;

function streamKey(): string {
  return consoleKeys().audit;
}

/**
 * Append one entry to the `rl:audit` stream on EVERY master (same id everywhere), so the log
 * survives a console restart and the loss of any minority of nodes. Never throws: an audit write
 * that reached no node is logged and reported in the result.
 */
export async function recordAudit(input: AuditInput): Promise<{ entry: AuditEntry; nodesWritten: number; nodesFailed: number }> {
  const entry: AuditEntry = {
    id: randomUUID(), at: Date.now(), reason: '', before: null, after: null, detail: '', ...input,
  };
  const fields = [
    'id', entry.id, 'at', String(entry.at), 'actor', entry.actor, 'role', entry.role, 'action', entry.action,
    'target', entry.target, 'reason', entry.reason, 'outcome', entry.outcome,
    'before', entry.before === null ? '' : JSON.stringify(entry.before),
    'after', entry.after === null ? '' : JSON.stringify(entry.after), 'detail', entry.detail,
  ];
  const key = streamKey();
  const results = await Promise.allSettled(getRuntime().clients.map(async (c) => {
    await ensureReady(c, 1_000);
    return c.xadd(key, 'MAXLEN', '~', String(MAX_LEN), '*', ...fields);
  }));
  const nodesWritten = results.filter((r) => r.status === 'fulfilled').length;
  if (nodesWritten === 0) logger().error({ entry }, 'audit entry reached no node');
  return { entry, nodesWritten, nodesFailed: results.length - nodesWritten };
}

export interface AuditFilter { actor?: string; action?: string; since?: number; limit: number }

/** Read the stream from every reachable master, merge, de-duplicate by id, newest first. */
export async function readAudit(filter: AuditFilter): Promise<{ entries: AuditEntry[]; nodesRead: number; nodesFailed: number }> {
  const key = streamKey();
  const clients = getRuntime().clients;
  // Read more than the limit per node when filtering, so filtered pages are not starved.
  const count = filter.actor || filter.action ? Math.min(MAX_LEN, filter.limit * 20) : filter.limit;
  const results = await Promise.allSettled(clients.map(async (c) => {
    await ensureReady(c, 1_000);
    return readNode(c, key, filter.since, count);
  }));
  const byId = new Map<string, AuditEntry>();
  let nodesRead = 0;
  for (const r of results) {
    if (r.status !== 'fulfilled') continue;
    nodesRead++;
    for (const e of r.value) if (!byId.has(e.id)) byId.set(e.id, e);
  }
  const entries = [...byId.values()]
    .filter((e) => (!filter.actor || e.actor === filter.actor) && (!filter.action || e.action === filter.action || e.action.startsWith(`${filter.action}.`)))
    .sort((a, b) => b.at - a.at || (a.id < b.id ? 1 : -1))
    .slice(0, filter.limit);
  return { entries, nodesRead, nodesFailed: clients.length - nodesRead };
}

async function readNode(client: Redis, key: string, since: number | undefined, count: number): Promise<AuditEntry[]> {
  const rows = await client.xrevrange(key, '+', since === undefined ? '-' : `${since}-0`, 'COUNT', count);
  return rows.map(([, flat]) => {
    const f: Record<string, string> = {};
    for (let i = 0; i + 1 < flat.length; i += 2) f[flat[i]!] = flat[i + 1]!;
    return {
      id: f.id ?? '', at: Number(f.at), actor: f.actor ?? '', role: f.role ?? '', action: f.action ?? '', target: f.target ?? '',
      reason: f.reason ?? '', outcome: f.outcome ?? '', before: parseJson(f.before), after: parseJson(f.after), detail: f.detail ?? '',
    };
  });
}

function parseJson(value: string | undefined): unknown {
  if (!value) return null;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}
