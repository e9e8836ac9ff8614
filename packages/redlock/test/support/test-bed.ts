import type Redis from 'ioredis';
import { afterEach } from 'vitest';
import { Redlock, type RedlockSettings } from '@redlock-console/redlock';
import { startRedisNodes, type RedisNode } from '@/test/support/redis-nodes';

/**
 * One test file's own redis-servers and the Redlocks made on them, torn down after each test: the
 * Redlocks quit first (no command of theirs is left on the wire), then what the test registered with
 * `onCleanup` (latest first: a proxy before the node behind it), then the nodes stop.
 */
export interface TestBed {
  /**
   * Start this test's redis-servers (startRedisNodes' arguments), stopped after it; clients default
   * to the latest set. The test keeps the returned array as its `nodes`: the bed owns their teardown.
   */
  start(...args: Parameters<typeof startRedisNodes>): Promise<RedisNode[]>;
  /** A Redlock with the file's settings and `settings` over them, on `targets` (default: every node's URL). */
  client(prefix: string, settings?: Partial<RedlockSettings>, targets?: Array<string | Redis>): Redlock;
  /** A Redlock made by the test itself, quit after the test like the bed's own. */
  track(redlock: Redlock): Redlock;
  /** Something to undo after the Redlocks quit and before the nodes stop. */
  onCleanup(undo: () => Promise<unknown> | unknown): void;
}

/**
 * Call once at a test file's top level. `defaults` are every client's settings (the file's lease
 * ceiling, deadlines); `quietNodeErrors` adds an empty `node-error` listener to each client the bed
 * makes, for files whose tests cut nodes off on purpose.
 */
export function testBed(defaults: Partial<RedlockSettings>, options: { quietNodeErrors?: boolean } = {}): TestBed {
  const redlocks: Redlock[] = [];
  const undos: Array<() => Promise<unknown> | unknown> = [];
  /** The latest nodes started (clients default to them); `started`: every node started in this test, stopped after it. */
  let nodes: RedisNode[] = [];
  const started: RedisNode[] = [];
  const bed: TestBed = {
    async start(...args) {
      nodes = await startRedisNodes(...args);
      started.push(...nodes);
      return nodes;
    },
    client(prefix, settings = {}, targets) {
      const r = new Redlock(targets ?? nodes.map((n) => n.url), { ...defaults, keyPrefix: prefix, ...settings });
      if (options.quietNodeErrors) r.on('node-error', () => undefined);
      return bed.track(r);
    },
    track(redlock) {
      redlocks.push(redlock);
      return redlock;
    },
    onCleanup(undo) {
      undos.push(undo);
    },
  };
  afterEach(async () => {
    // Each step runs even when one before it failed; the first failure is thrown at the end.
    const failures: unknown[] = [];
    await Promise.all(redlocks.splice(0).map((r) => r.quit().catch((e: unknown) => failures.push(e))));
    for (const undo of undos.splice(0).reverse()) await (async () => undo())().catch((e: unknown) => failures.push(e));
    await Promise.all(started.splice(0).map((n) => n.stop().catch((e: unknown) => failures.push(e))));
    nodes = [];
    if (failures.length > 0) throw failures[0];
  });
  return bed;
}
