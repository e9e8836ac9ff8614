import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { LiveEvent } from '@/lib/api/events';
import { EventHub, STREAM_BATCH_MAX_BYTES, STREAM_BATCH_MS, encodeEvent } from '@/lib/server/events/hub';

// Each open /api/events stream gets the events of a STREAM_BATCH_MS window as one chunk: one write
// per stream per window, not one per event (issue 18, finding 9: 200 streams took the lock service
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

  it('a window past STREAM_BATCH_MAX_BYTES goes out at once, in chunks no larger than that plus one event', () => {
    const hub = new EventHub(() => () => undefined);
    const chunks: Uint8Array[] = [];
    hub.subscribeEncoded((bytes) => chunks.push(bytes));
    const one = encodeEvent(event(0)).byteLength;
    const count = Math.ceil((3 * STREAM_BATCH_MAX_BYTES) / one);
    for (let i = 0; i < count; i++) hub.publish(event(0));
    expect(chunks.length).toBeGreaterThanOrEqual(2);
    for (const chunk of chunks) expect(chunk.byteLength).toBeLessThan(STREAM_BATCH_MAX_BYTES + one);
  });
});
