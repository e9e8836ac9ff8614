import { describe, expect, it } from 'vitest';
import { assembleFenceChanges, type NodeSample } from '../../lib/scenarios/timeline';

const sample = (t: number, node: number, fence: number | null | undefined, ok = true): NodeSample => ({
  t,
  node,
  ok,
  keys: [],
  ...(fence === undefined ? {} : { fence }),
});

/** The timeline shows each node's fence register as it moved, a step back included. */
describe('fence register changes on the timeline', () => {
  it('keeps the first value and every change per node, a register that goes back and one that goes away included', () => {
    const changes = assembleFenceChanges([
      sample(0, 1, 100),
      sample(300, 1, 100),
      sample(600, 1, 205),
      sample(0, 2, null),
      sample(300, 2, 205),
      sample(900, 1, 150), // back from an older snapshot
      sample(1200, 1, null), // flushed: none
      sample(1500, 1, undefined, false), // not answering: nothing said
      sample(1800, 1, null),
    ]);
    expect(changes).toEqual([
      { node: 1, at: 0, value: 100 },
      { node: 1, at: 600, value: 205 },
      { node: 1, at: 900, value: 150 },
      { node: 1, at: 1200, value: 0 },
      { node: 2, at: 0, value: 0 },
      { node: 2, at: 300, value: 205 },
    ]);
  });

  it('says nothing for nodes whose register was not read', () => {
    expect(assembleFenceChanges([sample(0, 1, undefined), sample(300, 2, undefined)])).toEqual([]);
  });
});
