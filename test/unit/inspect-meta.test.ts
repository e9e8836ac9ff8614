import { describe, expect, it } from 'vitest';
import { parseMeta, splitLockValue } from '@/lib/inspect';
import { lockValue } from '@redlock-console/redlock';

describe('lock values: `<token> <metadata JSON>`', () => {
  it('splits at the first space into the token and the parsed metadata', () => {
    const meta = { owner: 'h:12', purpose: 'a b  c', note: ' ' };
    expect(splitLockValue(lockValue('AbC_-123', JSON.stringify(meta)))).toEqual({ token: 'AbC_-123', meta });
    expect(splitLockValue('AbC_-123 {"owner":"o"}')).toEqual({ token: 'AbC_-123', meta: { owner: 'o' } });
  });

  it("reads a bare token (another library's lock, or no metadata) as the token with no metadata", () => {
    expect(splitLockValue('AbC_-123')).toEqual({ token: 'AbC_-123', meta: null });
    expect(splitLockValue('')).toEqual({ token: '', meta: null });
  });

  it('tolerates whatever follows the token: bad JSON, non-objects and an empty tail are no metadata, never a throw', () => {
    for (const tail of [
      '',
      ' ',
      '{',
      '{"owner": "cut',
      'not json',
      '[]',
      '["a"]',
      '"text"',
      '42',
      'null',
      '{"pid":12}',
      '{"a":"b"} trailing',
    ]) {
      expect(splitLockValue(`tok ${tail}`)).toEqual({ token: 'tok', meta: null });
    }
    expect(splitLockValue('tok  {"owner":"o"}')).toEqual({ token: 'tok', meta: null }); // two spaces: the tail starts with one
  });
});

describe('holder metadata text', () => {
  it('parses a JSON object of strings', () => {
    const text = JSON.stringify({
      owner: 'h:12',
      host: 'h',
      pid: '12',
      ttlMs: '10000',
      extensions: '0',
      acquiredAt: '1763712000000',
      fence: '42',
    });
    expect(parseMeta(text)).toEqual({
      owner: 'h:12',
      host: 'h',
      pid: '12',
      ttlMs: '10000',
      extensions: '0',
      acquiredAt: '1763712000000',
      fence: '42',
    });
  });

  it('drops fields that are not strings, and is null when none is left', () => {
    expect(parseMeta('{"owner":"a","pid":12,"nested":{"x":"y"},"list":["z"],"none":null,"ok":true}')).toEqual({ owner: 'a' });
    expect(parseMeta('{"pid":12}')).toBeNull();
    expect(parseMeta('{}')).toBeNull();
  });

  it('is null for anything that is not a JSON object, and never throws', () => {
    for (const bad of [
      null,
      undefined,
      0,
      1,
      '',
      '{',
      '{"a":',
      'not json',
      '[]',
      '["a"]',
      '"text"',
      '42',
      'null',
      '{"a":"b"} trailing',
      ['a'],
      { a: 'b' },
    ]) {
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
