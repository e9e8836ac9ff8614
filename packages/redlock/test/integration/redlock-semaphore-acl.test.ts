import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redlock } from '@redlock-console/redlock';
import { NO_PERSISTENCE, startRedisNodes, type RedisNode } from '@/test/support/redis-nodes';

// The semaphore as the README's ACL user (README "ACL": "the exact rules a Redis ACL user for the
// lock core needs"), on real redis-server. A full semaphore's waiter reads every slot after a
// contended attempt (semaphore-slots.ts): that read must use only commands the documented user
// holds, or a waiter never gets a permit once the semaphore was full (every read refused, on every
// node), whatever is released.

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

describe("a semaphore as the README's ACL user", () => {
  it('the slot read after a contended attempt works: a full semaphore is contended, a free slot is found; nothing refused', async () => {
    const prefix = 'acl-sem:';
    const rules = readmeRules(prefix);
    expect(rules).toContain(`~${prefix}*`);
    for (const n of nodes) {
      await n.client.call('ACL', 'SETUSER', 'semuser', 'reset', 'on', '>semuser-password', ...rules);
      await n.client.call('ACL', 'LOG', 'RESET');
    }
    const urls = nodes.map((n) => `redis://semuser:semuser-password@127.0.0.1:${n.port}`);
    const [a, b] = [0, 1].map(() => new Redlock(urls, { keyPrefix: prefix, retryCount: 0, nodeTimeoutMs: 1_000 }));
    redlocks.push(a!, b!);
    const errors: string[] = [];
    for (const r of [a!, b!]) r.on('node-error', (e) => errors.push(`${e.node}: ${e.error.message}`));
    await a!.markNodesClean();

    const held = await a!.acquireSemaphore('pool', 2, 10_000, { permits: 2 });
    // B's first attempt meets A's slots; its retry reads every slot and finds none free: the
    // semaphore is full (LockContendedError), not a cluster that cannot answer.
    const full = await b!.acquireSemaphore('pool', 2, 10_000, { retryCount: 1, retryDelayMs: 20 }).catch((e: unknown) => e);
    expect(full).toMatchObject({ name: 'LockContendedError', message: expect.stringMatching(/0 of 2 slots free on a quorum/) });
    await (
      await held.release()
    ).settled;

    // A holds one slot of two; B asks for one: whenever its random first attempt meets A's slot,
    // the read after it finds the other (20 tries: the read path is taken at least once but with
    // probability 2^-20).
    const one = await a!.acquireSemaphore('pool', 2, 10_000);
    const attempts: number[] = [];
    b!.on('acquire', (e) => attempts.push(e.attempts));
    for (let i = 0; i < 20; i++) {
      const permit = await b!.acquireSemaphore('pool', 2, 10_000, { retryCount: 3, retryDelayMs: 20 });
      expect(permit.slot).not.toBe(one.slot);
      await (
        await permit.release()
      ).settled;
    }
    expect(Math.max(...attempts)).toBeGreaterThanOrEqual(2);
    await (
      await one.release()
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
