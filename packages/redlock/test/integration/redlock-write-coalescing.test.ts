import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { NodeConnection } from '../../src/connection';
import { LockNode } from '../../src/node';
import { ScriptCall } from '../../src/resp';
import { RELEASE_SCRIPT } from '../../src/scripts';
import { Redlock } from '../../src/redlock';
import { InvalidArgumentError } from '../../src/errors';
import { startTestCluster, type TestCluster } from '@/test/support/cluster';

/**
 * writeCoalescing (settings.ts): 'tick' writes what one callback queued as soon as it is done; 'io'
 * waits for the end of the event loop's I/O phase, so what several callbacks of one turn queued
 * goes out as one write. Two setImmediate callbacks of one turn stand for two HTTP requests read
 * in the same I/O phase (each one queues its own command). Counted at the connection's write.
 */
let cluster: TestCluster;
let url: string;

beforeAll(async () => {
  cluster = await startTestCluster({ nodes: 1, persistence: 'none' });
  url = cluster.supervisor.directUrls()[0]!;
});

afterAll(async () => {
  await cluster?.stop();
});

afterEach(() => {
  vi.restoreAllMocks();
});

/** Writes to the socket while two callbacks of one event-loop turn each queue a release of a key nobody holds. */
async function writesForTwoCallbacks(mode: 'tick' | 'io'): Promise<{ writes: number; replies: unknown[] }> {
  const node = new LockNode(0, url, 1_000, () => undefined, Infinity, mode);
  await node.whenBooted();
  // Let the connection's own start-up writes (SCRIPT LOAD) go first.
  // pace: the connection's own start-up writes (SCRIPT LOAD) go first
  await new Promise((resolve) => setTimeout(resolve, 50));
  const write = vi.spyOn(NodeConnection.prototype, 'write');
  const release = (key: string) => node.run(new ScriptCall(RELEASE_SCRIPT, 1, [key, 'no-such-token', '', key]));
  const replies = await new Promise<unknown[]>((resolve, reject) => {
    const out: unknown[] = [];
    const settle = (i: number) => (value: unknown) => {
      out[i] = value;
      if (out.filter((v) => v !== undefined).length === 2) resolve(out);
    };
    setImmediate(() => void release('wc:a').then(settle(0), reject));
    setImmediate(() => void release('wc:b').then(settle(1), reject));
  });
  const writes = write.mock.calls.length;
  write.mockRestore();
  await node.close();
  return { writes, replies };
}

describe('writeCoalescing', () => {
  it("'tick' writes each callback's command on its own; 'io' writes both callbacks' commands at once; the answers are the same", async () => {
    const tick = await writesForTwoCallbacks('tick');
    const io = await writesForTwoCallbacks('io');
    expect(tick.writes).toBe(2);
    expect(io.writes).toBe(1);
    expect(io.replies).toEqual(tick.replies);
  });

  it("is 'tick' unless asked, and refuses anything but 'tick' or 'io'", async () => {
    const plain = new Redlock([url]);
    const io = new Redlock([url], { writeCoalescing: 'io' });
    try {
      expect(plain.settings.writeCoalescing).toBe('tick');
      expect(io.settings.writeCoalescing).toBe('io');
      expect(() => new Redlock([url], { writeCoalescing: 'always' as 'io' })).toThrow(InvalidArgumentError);
    } finally {
      await plain.quit();
      await io.quit();
    }
  });

  it("'io' keeps the lock contract: a grant, a refusal of a second client, a release, a fence above the last", async () => {
    // Node timeouts of 1 s: about the contract, not latency (at 100 ms a loaded machine's first grant timed out).
    const a = new Redlock([url], { writeCoalescing: 'io', retryCount: 0, nodeTimeoutMs: 1_000 });
    const b = new Redlock([url], { writeCoalescing: 'io', retryCount: 0, nodeTimeoutMs: 1_000 });
    try {
      const first = await a.acquire('wc:lock', 5_000);
      await expect(b.acquire('wc:lock', 5_000)).rejects.toThrow(/held/);
      await first.release();
      const second = await b.acquire('wc:lock', 5_000);
      expect(second.fence).toBeGreaterThan(first.fence!);
      await second.release();
    } finally {
      await a.quit();
      await b.quit();
    }
  });
});
