import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { LiveEvent } from '@/lib/api/events';
import { EventGrouping } from '@/lib/server/events/event-grouping';

// One lock change seen on several nodes is one live event, also when a node's notification comes
// late (1,451 grants reported for 1,441 with 200 streams open).

let events: LiveEvent[];
let grouping: EventGrouping;

beforeEach(() => {
  vi.useFakeTimers();
  events = [];
  grouping = new EventGrouping((e) => events.push(e), 40, 2_000);
});
afterEach(() => {
  grouping.stop();
  vi.useRealTimers();
});

const summary = () => events.map((e) => `${e.type} ${e.resource} [${e.nodes!.join(',')}]`);

describe('live event grouping', () => {
  it('copies of one change within the window are one event listing their nodes in order', () => {
    for (const node of [3, 1, 2]) grouping.add(node, 'lock.granted', 'r');
    vi.advanceTimersByTime(40);
    expect(summary()).toEqual(['lock.granted r [1,2,3]']);
  });

  it('a node whose copy comes after the window is absorbed, not reported as a second grant', () => {
    for (const node of [1, 2, 3]) grouping.add(node, 'lock.granted', 'r');
    vi.advanceTimersByTime(300);
    grouping.add(5, 'lock.granted', 'r');
    grouping.add(4, 'lock.granted', 'r');
    vi.advanceTimersByTime(300);
    expect(summary()).toEqual(['lock.granted r [1,2,3]']);
  });

  it('grant, release, grant again: three events (a change of another type in between ends the lingering)', () => {
    for (const node of [1, 2, 3]) grouping.add(node, 'lock.granted', 'r');
    vi.advanceTimersByTime(50);
    for (const node of [1, 2, 3]) grouping.add(node, 'lock.released', 'r');
    vi.advanceTimersByTime(50);
    for (const node of [4, 5, 1]) grouping.add(node, 'lock.granted', 'r');
    vi.advanceTimersByTime(50);
    expect(summary()).toEqual(['lock.granted r [1,2,3]', 'lock.released r [1,2,3]', 'lock.granted r [1,4,5]']);
  });

  it('the same node twice is two changes, within the window or after it', () => {
    grouping.add(1, 'lock.extended', 'r');
    grouping.add(1, 'lock.extended', 'r');
    vi.advanceTimersByTime(50);
    grouping.add(1, 'lock.extended', 'r');
    vi.advanceTimersByTime(50);
    expect(summary()).toEqual(['lock.extended r [1]', 'lock.extended r [1]', 'lock.extended r [1]']);
  });

  it('after the linger a new node is a new change; other resources never merge', () => {
    grouping.add(1, 'lock.granted', 'a');
    grouping.add(1, 'lock.granted', 'b');
    vi.advanceTimersByTime(2_100);
    grouping.add(2, 'lock.granted', 'a');
    vi.advanceTimersByTime(50);
    expect(summary()).toEqual(['lock.granted a [1]', 'lock.granted b [1]', 'lock.granted a [2]']);
  });

  it('a grant right after a release still in its window is a new grant, not a late copy of the old one', () => {
    grouping.add(1, 'lock.granted', 'r');
    vi.advanceTimersByTime(40);
    grouping.add(1, 'lock.released', 'r');
    vi.advanceTimersByTime(10);
    grouping.add(2, 'lock.granted', 'r');
    grouping.add(3, 'lock.granted', 'r');
    vi.advanceTimersByTime(100);
    expect(summary()).toEqual(['lock.granted r [1]', 'lock.released r [1]', 'lock.granted r [2,3]']);
  });

  it('one timer for every open window, whatever the number of changes; each window still closes on time, in order', () => {
    // A timer per change was two per lock taken and released, each an async resource.
    for (let i = 0; i < 100; i++) grouping.add(1, 'lock.granted', `r${i}`);
    vi.advanceTimersByTime(20);
    for (let i = 0; i < 100; i++) grouping.add(2, 'lock.released', `r${i}`);
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(20);
    expect(events).toHaveLength(100);
    expect(events.every((e) => e.type === 'lock.granted')).toBe(true);
    vi.advanceTimersByTime(19);
    expect(events).toHaveLength(100);
    vi.advanceTimersByTime(1);
    expect(summary().slice(100, 102)).toEqual(['lock.released r0 [2]', 'lock.released r1 [2]']);
    expect(events).toHaveLength(200);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('stop() from inside an emit (the last stream leaving) ends it: no later event, no crash, later changes ignored', () => {
    const stopping = new EventGrouping((e) => {
      events.push(e);
      stopping.stop();
    }, 40);
    for (let i = 0; i < 5; i++) stopping.add(1, 'lock.granted', `a${i}`);
    vi.advanceTimersByTime(20);
    for (let i = 0; i < 5; i++) stopping.add(1, 'lock.granted', `b${i}`);
    expect(() => vi.advanceTimersByTime(100)).not.toThrow();
    expect(summary()).toEqual(['lock.granted a0 [1]']);
    stopping.add(2, 'lock.granted', 'c');
    vi.advanceTimersByTime(100);
    expect(events).toHaveLength(1);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a wall clock stepped back does not stretch the lingering (monotonic windows)', () => {
    grouping.add(1, 'lock.granted', 'r');
    vi.advanceTimersByTime(40);
    vi.setSystemTime(Date.now() - 3_600_000);
    vi.advanceTimersByTime(2_100);
    // Past the 2 s linger: node 1 again is a new change (an hour-long linger would absorb node 2's).
    grouping.add(2, 'lock.granted', 'r');
    vi.advanceTimersByTime(40);
    expect(summary()).toEqual(['lock.granted r [1]', 'lock.granted r [2]']);
  });
});
