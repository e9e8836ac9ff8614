import { describe, expect, it } from 'vitest';
import { NODE, OTHER, summariseProfile, type CpuProfile, type ProfileNode } from '../../bench/harness/cpu-profile';

const frame = (id: number, functionName: string, url: string, children: number[] = []): ProfileNode => ({
  id,
  callFrame: { functionName, url, lineNumber: 0 },
  children,
});

/**
 * (root) → onStreamRead (node:net) → readLeanRequest (lock-service/http1-request) → from (node:buffer)
 *                                   → acquire (packages/redlock) → writev (native)
 *                                                                 → Buffer.concat (node:buffer)
 *        → processTicksAndRejections (node:internal) ; (idle) ; (garbage collector) ; anonymous (no file)
 */
const NODES: ProfileNode[] = [
  frame(1, '(root)', '', [2, 8, 9, 10, 11]),
  frame(2, 'onStreamRead', 'node:internal/stream_base_commons', [3, 5]),
  frame(3, 'readLeanRequest', 'file:///app/lib/server/lock-service/http1-request.ts', [4]),
  frame(4, 'from', 'node:buffer'),
  frame(5, 'acquire', 'file:///app/packages/redlock/src/redlock.ts', [6, 7]),
  frame(6, 'writev', ''),
  frame(7, 'concat', 'node:buffer'),
  frame(8, 'processTicksAndRejections', 'node:internal/process/task_queues'),
  frame(9, '(idle)', ''),
  frame(10, '(garbage collector)', ''),
  frame(11, 'mystery', ''),
];

/** Samples with the time until the next one: the first delta is before the first sample. */
function profile(samples: [node: number, us: number][]): CpuProfile {
  const timeDeltas = [0, ...samples.slice(0, -1).map(([, us]) => us)];
  return { nodes: NODES, startTime: 0, endTime: 1, samples: samples.map(([n]) => n), timeDeltas };
}

describe('the bench’s CPU profile summary by area', () => {
  it('gives each sample’s time to the innermost frame that names an area, Node’s own frames counting for their caller', () => {
    const s = summariseProfile(
      profile([
        [4, 100], // Buffer.from under the lean reader: HTTP parse
        [3, 50], // the lean reader itself
        [7, 200], // Buffer.concat under the core: the core
        [6, 300], // a socket write under the core: socket writes
        [8, 40], // only Node's frames: Node
        [2, 30], // the socket read itself: Node (stream_base_commons is no write by its file alone)
        [9, 1_000], // idle
        [10, 60], // GC
        [11, 25], // no file, nothing named on its stack
        [5, 70], // the last sample gets the mean of the others' times (the profile does not say its own)
      ]),
    );
    const us = Object.fromEntries(s.areas.map((a) => [a.area, a.us]));
    const mean = (100 + 50 + 200 + 300 + 40 + 30 + 1_000 + 60 + 25) / 9;
    expect(us['HTTP parse and answer']).toBe(150);
    expect(us['lock core (packages/redlock)']).toBe(200 + mean);
    expect(us['socket writes (to clients and masters)']).toBe(300);
    expect(us[NODE]).toBe(40 + 30);
    expect(us['idle (waiting for the network)']).toBe(1_000);
    expect(us['garbage collection']).toBe(60);
    expect(us[OTHER]).toBe(25);
    expect(s.totalUs).toBe(1_805 + mean);
    expect(s.areas[0]!.area).toBe('idle (waiting for the network)');
    expect(s.top[0]).toEqual({ name: '(idle)', us: 1_000 });
    expect(s.top.find((t) => t.name.startsWith('writev'))?.us).toBe(300);
  });
});
