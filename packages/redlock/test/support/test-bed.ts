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
  /** Start this test's redis-servers (startRedisNodes' arguments), stopped after it; clients default to them. */
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
  let nodes: RedisNode[] = [];
  const bed: TestBed = {
    async start(...args) {
      nodes = await startRedisNodes(...args);
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
    await Promise.all(redlocks.splice(0).map((r) => r.quit()));
    for (const undo of undos.splice(0).reverse()) await undo();
    await Promise.all(nodes.map((n) => n.stop()));
    nodes = [];
  });
  return bed;
}
