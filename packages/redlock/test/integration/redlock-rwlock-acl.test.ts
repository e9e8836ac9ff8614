import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redlock } from '@redlock-console/redlock';
import { waitFor } from '@/test/support/cluster';
import { NO_PERSISTENCE, startRedisNodes, type RedisNode } from '@/test/support/redis-nodes';

// The read-write lock as the README's ACL user (README "ACL"), on real redis-server. Every reader
// attempt reads the writer's intent and the slots first (rwlock-read.ts), and a waiting writer
// takes, renews and releases its intent: all of it must use only commands the documented user
// holds, or no reader is ever granted (every read refused, on every node).

let nodes: RedisNode[] = [];
const redlocks: Redlock[] = [];

beforeAll(async () => {
  nodes = await startRedisNodes(() => NO_PERSISTENCE, 3);
});

afterAll(async () => {
  await Promise.all(redlocks.map((r) => r.quit()));
  await Promise.all(nodes.map((n) => n.stop()));
});

/** The README's `ACL SETUSER lockcore …` rules, for `prefix` instead of `rl:`. */
function readmeRules(prefix: string): string[] {
  const readme = readFileSync(join(import.meta.dirname, '..', '..', 'README.md'), 'utf8');
  const line = readme.split('\n').find((l) => l.startsWith('ACL SETUSER lockcore on >password '))!;
  return line
    .split(' ')
    .slice(5)
    .map((rule) => rule.replace('rl:', prefix));
}

describe("a read-write lock as the README's ACL user", () => {
  it('readers read and share, a waiting writer leaves its intent, is woken and granted, readers go on after it; nothing refused', async () => {
    const prefix = 'acl-rw:';
    for (const n of nodes) {
      await n.client.call('ACL', 'SETUSER', 'rwuser', 'reset', 'on', '>rwuser-password', ...readmeRules(prefix));
      await n.client.call('ACL', 'LOG', 'RESET');
    }
    const urls = nodes.map((n) => `redis://rwuser:rwuser-password@127.0.0.1:${n.port}`);
    const [a, b] = [0, 1].map(() => new Redlock(urls, { keyPrefix: prefix, retryCount: 0, nodeTimeoutMs: 1_000 }));
    redlocks.push(a!, b!);
    const errors: string[] = [];
    for (const r of [a!, b!]) r.on('node-error', (e) => errors.push(`${e.node}: ${e.error.message}`));
    await a!.markNodesClean();

    const readers = [await a!.acquireRead('doc', 10_000, { maxReaders: 2 }), await b!.acquireRead('doc', 10_000, { maxReaders: 2 })];
    const writing = b!.acquireWrite('doc', 10_000, { maxReaders: 2, retryCount: 50, retryDelayMs: 100 });
    // Its first attempt met the readers: its intent stands on a quorum, and a reader arriving now reads it.
    const intents = async () => (await Promise.all(nodes.map((n) => n.client.get(`${prefix}rw:doc:intent`)))).filter((v) => v !== null);
    await waitFor(async () => (await intents()).length >= 2, 10_000, "the writer's intent");
    const refused = await a!.acquireRead('doc', 10_000, { maxReaders: 2 }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ name: 'LockContendedError', message: expect.stringMatching(/a writer waits/) });
    await Promise.all(readers.map(async (l) => (await l.release()).settled));
    const w = await writing;
    expect(w.fence).toBeGreaterThan(readers[1]!.fence!);
    await (
      await w.release()
    ).settled;
    await (
      await (await a!.acquireRead('doc', 10_000, { maxReaders: 2 })).release()
    ).settled;

    expect(errors).toEqual([]);
    const denials: string[] = [];
    for (const n of nodes) {
      const entries = (await n.client.call('ACL', 'LOG')) as unknown[][];
      for (const entry of entries) denials.push(entry.map(String).join(' '));
    }
    expect(denials).toEqual([]);
  }, 60_000);
});
