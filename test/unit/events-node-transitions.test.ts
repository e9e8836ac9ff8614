import { describe, expect, it } from 'vitest';
import { NodeTransitions } from '@/lib/server/events/node-transitions';

// node.up / node.down from successive polls (lib/server/events/node-source.ts).

const up = { up: true };
const refused = { up: false, error: 'connect ECONNREFUSED 127.0.0.1:6381' };
const slow = { up: false, error: 'health check timed out after 1000 ms' };

describe('node transitions', () => {
  it('reports nothing on the first poll, then a refused node down at once and up when it answers', () => {
    const t = new NodeTransitions();
    expect(t.observe([up, up])).toEqual([]);
    expect(t.observe([up, refused])).toEqual([{ node: 2, up: false, detail: refused.error }]);
    expect(t.observe([up, refused])).toEqual([]);
    expect(t.observe([up, up])).toEqual([{ node: 2, up: true }]);
  });

  it('one timed-out read (a busy console, not a down node) is no down/up pair', () => {
    const t = new NodeTransitions();
    t.observe([up, up]);
    expect(t.observe([slow, up])).toEqual([]);
    expect(t.observe([up, up])).toEqual([]);
  });

  it('two timed-out reads in a row: down (a partitioned or paused node), then up', () => {
    const t = new NodeTransitions();
    t.observe([up]);
    expect(t.observe([slow])).toEqual([]);
    expect(t.observe([slow])).toEqual([{ node: 1, up: false, detail: slow.error }]);
    expect(t.observe([slow])).toEqual([]);
    expect(t.observe([up])).toEqual([{ node: 1, up: true }]);
  });

  it('a timeout followed by a refusal is down at once', () => {
    const t = new NodeTransitions();
    t.observe([up]);
    expect(t.observe([slow])).toEqual([]);
    expect(t.observe([refused])).toEqual([{ node: 1, up: false, detail: refused.error }]);
  });

  it('a first read that timed out is no down, and no up after it', () => {
    const t = new NodeTransitions();
    expect(t.observe([slow])).toEqual([]);
    expect(t.observe([up])).toEqual([]);
  });
});
