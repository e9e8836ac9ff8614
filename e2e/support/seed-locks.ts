import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { lockKey, lockValue } from '@redlock-console/redlock';
import { sandbox } from './sandbox';

/**
 * Write lock keys straight into the e2e cluster's masters, bypassing the lock service: fast
 * (pipelines, thousands of keys per round trip) and able to build states the service never
 * leaves behind on purpose (a key on 2 of 5 nodes, two tokens on two nodes each, …).
 * Keys follow the lock core's layout (packages/redlock/src/value.ts): `rl:lock:<resource>` =
 * `<token> <metadata JSON>` (string values) with PX, or the bare token without metadata.
 */

const KEY_PREFIX = process.env.REDLOCK_KEY_PREFIX ?? 'rl:';
const BATCH = 2_000;

export interface SeedLock {
  resource: string;
  token: string;
  ttlMs: number;
  /** 1-based node ids that get the key. */
  nodes: readonly number[];
  /** Holder metadata, written into the key's value after the token and a space. */
  meta?: Record<string, string>;
}

/** A random token shaped like the service's (20 bytes, base64url). */
export function randomToken(): string {
  return randomBytes(20).toString('base64url');
}

/** One ioredis client per node, through the same URLs (fault proxies) the console uses. */
export async function nodeClients(): Promise<Redis[]> {
  const nodes = await sandbox().nodes();
  return nodes
    .sort((a, b) => a.id - b.id)
    .map((n) => new Redis(n.url, { lazyConnect: false, maxRetriesPerRequest: 1, enableOfflineQueue: true }));
}

async function withClients<T>(fn: (clients: Redis[]) => Promise<T>): Promise<T> {
  const clients = await nodeClients();
  try {
    return await fn(clients);
  } finally {
    clients.forEach((c) => c.disconnect());
  }
}

/** Write the locks, node by node in parallel, BATCH keys per pipeline. */
export async function seedLocks(locks: readonly SeedLock[]): Promise<void> {
  await withClients(async (clients) => {
    await Promise.all(
      clients.map(async (client, i) => {
        const node = i + 1;
        const mine = locks.filter((l) => l.nodes.includes(node));
        for (let start = 0; start < mine.length; start += BATCH) {
          const pipe = client.pipeline();
          for (const lock of mine.slice(start, start + BATCH)) {
            const value = lock.meta && Object.keys(lock.meta).length > 0 ? lockValue(lock.token, JSON.stringify(lock.meta)) : lock.token;
            pipe.set(lockKey(KEY_PREFIX, lock.resource), value, 'PX', lock.ttlMs);
          }
          const replies = await pipe.exec();
          const failed = replies?.find(([err]) => err);
          if (failed) throw failed[0]!;
        }
      }),
    );
  });
}

/**
 * `count` held locks named `<prefix>000000`…, each on every node with its own token (so the
 * matrix shows many colours) and holder metadata. Returns the resource names.
 */
export async function seedManyLocks(prefix: string, count: number, ttlMs: number, nodeCount = 5): Promise<string[]> {
  const all = Array.from({ length: nodeCount }, (_, i) => i + 1);
  const width = String(count - 1).length;
  const acquiredAt = String(Date.now());
  const locks: SeedLock[] = Array.from({ length: count }, (_, i) => ({
    resource: `${prefix}${String(i).padStart(width, '0')}`,
    token: randomToken(),
    ttlMs,
    nodes: all,
    meta: {
      owner: `worker-${i % 17}`,
      host: `batch-${i % 5}.e2e`,
      pid: String(1000 + (i % 97)),
      purpose: 'seeded by e2e',
      acquiredAt,
      extensions: '0',
      ttlMs: String(ttlMs),
    },
  }));
  await seedLocks(locks);
  return locks.map((l) => l.resource);
}

/** Delete lock keys of these resources on every node (the metadata is in the keys' values). */
export async function deleteLocks(resources: readonly string[]): Promise<void> {
  await withClients(async (clients) => {
    await Promise.all(
      clients.map(async (client) => {
        for (let start = 0; start < resources.length; start += BATCH) {
          const keys = resources.slice(start, start + BATCH).map((r) => lockKey(KEY_PREFIX, r));
          await client.unlink(...keys);
        }
      }),
    );
  });
}

/** Write arbitrary keys (e.g. another Redlock library's bare `lock:<name>` keys) on some nodes; `ttlMs: null`: no TTL at all. */
export async function seedRawKeys(
  keys: ReadonlyArray<{ key: string; value: string; ttlMs: number | null; nodes: readonly number[] }>,
): Promise<void> {
  await withClients(async (clients) => {
    await Promise.all(
      clients.map(async (client, i) => {
        const pipe = client.pipeline();
        for (const k of keys) {
          if (!k.nodes.includes(i + 1)) continue;
          if (k.ttlMs === null) pipe.set(k.key, k.value);
          else pipe.set(k.key, k.value, 'PX', k.ttlMs);
        }
        await pipe.exec();
      }),
    );
  });
}

/** Delete raw keys on every node. */
export async function deleteRawKeys(keys: readonly string[]): Promise<void> {
  if (keys.length === 0) return;
  await withClients(async (clients) => {
    await Promise.all(clients.map((client) => client.unlink(...keys)));
  });
}
