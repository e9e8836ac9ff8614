import { describe, expect, it } from 'vitest';
import { metaKeyOf, parseMeta } from '@/lib/inspect';

describe('holder metadata strings', () => {
  it('is keyed by the attempt\'s token', () => {
    expect(metaKeyOf('rl:meta:', 'AbC_-123')).toBe('rl:meta:AbC_-123');
  });

  it('parses a JSON object of strings', () => {
    const text = JSON.stringify({ owner: 'h:12', host: 'h', pid: '12', ttlMs: '10000', extensions: '0', acquiredAt: '1763712000000', fence: '42' });
    expect(parseMeta(text)).toEqual({ owner: 'h:12', host: 'h', pid: '12', ttlMs: '10000', extensions: '0', acquiredAt: '1763712000000', fence: '42' });
  });

  it('drops fields that are not strings, and is null when none is left', () => {
    expect(parseMeta('{"owner":"a","pid":12,"nested":{"x":"y"},"list":["z"],"none":null,"ok":true}')).toEqual({ owner: 'a' });
    expect(parseMeta('{"pid":12}')).toBeNull();
    expect(parseMeta('{}')).toBeNull();
  });

  it('is null for anything that is not a JSON object, and never throws', () => {
    for (const bad of [null, undefined, 0, 1, '', '{', '{"a":', 'not json', '[]', '["a"]', '"text"', '42', 'null', '{"a":"b"} trailing', ['a'], { a: 'b' }]) {
      expect(parseMeta(bad)).toBeNull();
    }
  });

  it('keeps an own __proto__ field as data, never as a prototype', () => {
    const meta = parseMeta('{"__proto__":{"polluted":"yes"},"owner":"o"}');
    expect(meta).toEqual({ owner: 'o' });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(meta)).toBe(Object.prototype);
  });
});
