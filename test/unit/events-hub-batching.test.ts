import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BURST_RESOURCES, STREAM_BURST_AT, type LiveEvent } from '@/lib/api/events';
import { EventHub, STREAM_BATCH_MAX_BYTES, STREAM_BATCH_MS, encodeEvent } from '@/lib/server/events/hub';

// Each open /api/events stream gets the events of a STREAM_BATCH_MS window as one chunk: one write
// per stream per window, not one per event (200 streams took the lock service
// from 372 to 61 pairs/s).

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

const event = (i: number): LiveEvent => ({ type: 'lock.granted', at: i, resource: `r${i}`, nodes: [1, 2, 3], source: 'notifications' });

describe('event hub batching', () => {
  it('the events of one window reach every stream as one chunk, in order, each serialised once', () => {
    const hub = new EventHub(() => () => undefined);
    const chunks: Uint8Array[][] = [[], []];
    hub.subscribeEncoded((bytes) => chunks[0]!.push(bytes));
    hub.subscribeEncoded((bytes) => chunks[1]!.push(bytes));
    for (let i = 0; i < 50; i++) hub.publish(event(i));
    expect(chunks[0]).toHaveLength(0);
    vi.advanceTimersByTime(STREAM_BATCH_MS);
    const expected = Buffer.concat(Array.from({ length: 50 }, (_, i) => encodeEvent(event(i))));
    for (const stream of chunks) {
      expect(stream).toHaveLength(1);
      expect(Buffer.from(stream[0]!).equals(expected)).toBe(true);
    }
    // The same bytes object for every stream: joined once.
    expect(chunks[0]![0]).toBe(chunks[1]![0]);
    hub.publish(event(50));
    vi.advanceTimersByTime(STREAM_BATCH_MS);
    expect(chunks[0]).toHaveLength(2);
  });

  it('plain listeners still get each event at once', () => {
    const hub = new EventHub(() => () => undefined);
    const seen: string[] = [];
    hub.subscribe((e) => seen.push(e.resource!));
    hub.publish(event(1));
    expect(seen).toEqual(['r1']);
  });

  it('nothing is sent to streams that left, and the last one leaving drops the pending batch', () => {
    const hub = new EventHub(() => () => undefined);
    const got: Uint8Array[] = [];
    const stop = hub.subscribeEncoded((bytes) => got.push(bytes));
    hub.publish(event(1));
    stop();
    vi.advanceTimersByTime(STREAM_BATCH_MS);
    expect(got).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a stream that subscribes mid-window gets only what is published after it', () => {
    const hub = new EventHub(() => () => undefined);
    const early: Uint8Array[] = [];
    const late: Uint8Array[] = [];
    hub.subscribeEncoded((bytes) => early.push(bytes));
    hub.publish(event(1));
    hub.subscribeEncoded((bytes) => late.push(bytes));
    hub.publish(event(2));
    vi.advanceTimersByTime(STREAM_BATCH_MS);
    expect(Buffer.concat(early).equals(Buffer.concat([encodeEvent(event(1)), encodeEvent(event(2))]))).toBe(true);
    expect(Buffer.concat(late).equals(Buffer.from(encodeEvent(event(2))))).toBe(true);
  });

  it('a window of about STREAM_BATCH_MAX_BYTES goes out at once, in chunks near that bound (a stream’s whole queue is 1 MiB: feed.ts)', () => {
    const hub = new EventHub(() => () => undefined);
    const chunks: Uint8Array[] = [];
    hub.subscribeEncoded((bytes) => chunks.push(bytes), 'r1');
    for (let i = 0; i < 1_000; i++) hub.publish({ ...event(i), resource: 'r1' });
    expect(chunks.length).toBeGreaterThanOrEqual(1);
    const detail = 'x'.repeat(1_000);
    for (let i = 0; i < 500; i++) hub.publish({ ...event(i), resource: 'r1', detail });
    expect(chunks.length).toBeGreaterThan(5);
    for (const chunk of chunks) expect(chunk.byteLength).toBeLessThan(STREAM_BATCH_MAX_BYTES + 2_000);
  });

  it('a flood over many resources stays one window: one burst a window, not a chunk every ~400 events', () => {
    const hub = new EventHub(() => () => undefined);
    const chunks: Uint8Array[] = [];
    hub.subscribeEncoded((bytes) => chunks.push(bytes));
    for (let i = 0; i < 3_000; i++) hub.publish(event(i));
    expect(chunks).toHaveLength(0);
    vi.advanceTimersByTime(STREAM_BATCH_MS);
    expect(messages(chunks).map(([type]) => type)).toEqual(['lock.burst']);
  });

  it('a stop called twice does not drop a later stream on the same resource', () => {
    const hub = new EventHub(() => () => undefined);
    const got: Uint8Array[] = [];
    const stopA = hub.subscribeEncoded(() => undefined, 'r1');
    stopA();
    hub.subscribeEncoded((bytes) => got.push(bytes), 'r1');
    stopA();
    expect(hub.size).toBe(1);
    hub.publish({ ...event(1), resource: 'r1' });
    vi.advanceTimersByTime(STREAM_BATCH_MS);
    expect(got).toHaveLength(1);
  });
});

/** The SSE messages of a chunk: [type, data]. */
function messages(chunks: Uint8Array[]): Array<[string, LiveEvent]> {
  return Buffer.concat(chunks)
    .toString('utf8')
    .split('\n\n')
    .filter(Boolean)
    .map((m) => {
      const [typeLine, dataLine] = m.split('\n');
      return [typeLine!.slice('event: '.length), JSON.parse(dataLine!.slice('data: '.length)) as LiveEvent];
    });
}

describe('event hub bursts: past STREAM_BURST_AT lock changes in a window', () => {
  const node: LiveEvent = { type: 'node.down', at: 5, node: 3, source: 'notifications' };
  const flood = () => [
    ...Array.from({ length: 150 }, (_, i): LiveEvent => ({ ...event(i), resource: `r${i % 30}` })),
    node,
    ...Array.from({ length: 50 }, (_, i): LiveEvent => ({ type: 'lock.released', at: 200 + i, resource: `r${i % 30}`, source: 'service' })),
  ];

  it('a stream that follows every change gets the node events and one lock.burst with the counts, not 200 lock events', () => {
    const hub = new EventHub(() => () => undefined);
    const chunks: Uint8Array[] = [];
    hub.subscribeEncoded((bytes) => chunks.push(bytes));
    for (const e of flood()) hub.publish(e);
    vi.advanceTimersByTime(STREAM_BATCH_MS);
    const got = messages(chunks);
    // The burst stands where the window's first lock change stood.
    expect(got.map(([type]) => type)).toEqual(['lock.burst', 'node.down']);
    const burst = got[0]![1];
    expect(burst.counts).toEqual({ 'lock.granted': 150, 'lock.released': 50 });
    expect(burst.resources).toHaveLength(BURST_RESOURCES);
    expect(burst.at).toBe(249);
    expect(burst.detail).toContain('200 lock changes');
  });

  it('streams opening and closing mid-window do not split it under the threshold (the flood still becomes one burst)', () => {
    const hub = new EventHub(() => () => undefined);
    const chunks: Uint8Array[] = [];
    hub.subscribeEncoded((bytes) => chunks.push(bytes));
    for (let i = 0; i < 60; i++) hub.publish(event(i));
    const late: Uint8Array[] = [];
    hub.subscribeEncoded(() => undefined, 'r3')();
    const stopLate = hub.subscribeEncoded((bytes) => late.push(bytes));
    for (let i = 60; i < 120; i++) hub.publish(event(i));
    vi.advanceTimersByTime(STREAM_BATCH_MS);
    expect(messages(chunks).map(([type]) => type)).toEqual(['lock.burst']);
    expect(messages(chunks)[0]![1].counts).toEqual({ 'lock.granted': 120 });
    // The stream that joined mid-window gets what came after it: 60, under the threshold.
    expect(messages(late).map(([, e]) => e.resource)).toEqual(Array.from({ length: 60 }, (_, i) => `r${60 + i}`));
    stopLate();
  });

  it('up to STREAM_BURST_AT lock changes are listed one by one', () => {
    const hub = new EventHub(() => () => undefined);
    const chunks: Uint8Array[] = [];
    hub.subscribeEncoded((bytes) => chunks.push(bytes));
    for (let i = 0; i < STREAM_BURST_AT; i++) hub.publish(event(i));
    hub.publish(node);
    vi.advanceTimersByTime(STREAM_BATCH_MS);
    expect(messages(chunks).filter(([type]) => type === 'lock.granted')).toHaveLength(STREAM_BURST_AT);
  });

  it('a stream that follows one resource gets its lock events one by one, and the node events, whatever the rate', () => {
    const hub = new EventHub(() => () => undefined);
    const mine: Uint8Array[] = [];
    const stop = hub.subscribeEncoded((bytes) => mine.push(bytes), 'r7');
    for (const e of flood()) hub.publish(e);
    vi.advanceTimersByTime(STREAM_BATCH_MS);
    const got = messages(mine);
    expect(got.map(([type]) => type)).toEqual([
      'lock.granted',
      'lock.granted',
      'lock.granted',
      'lock.granted',
      'lock.granted',
      'node.down',
      'lock.released',
      'lock.released',
    ]);
    expect(got.every(([type, e]) => type === 'node.down' || e.resource === 'r7')).toBe(true);
    stop();
    expect(hub.size).toBe(0);
  });
});
