import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { EXTEND_SCRIPT } from '../../src/scripts';
import { uniquePrefix } from '@/test/support/cluster';
import { scriptNode } from '@/test/support/script-node';

// extend.lua run directly on one real redis-server: every key must hold the token or nothing is
// extended; PEXPIRE GT lengthens and never shortens; the metadata counts the extension and records
// the ttl, padded to the old length. Written for extend.lua's Lua mutants
// (scripts/mutation/lua-mutants.ts, docs/mutation.md).
let d: Redis;
scriptNode((client) => void (d = client));

const extend = (keys: string[], token: string, ttl: number) =>
  d.eval(EXTEND_SCRIPT.source, keys.length, ...keys, token, String(ttl)) as Promise<number>;

describe('extend.lua', () => {
  it('every key held (bare token, token with metadata): 1, each key lives the new ttl, the metadata counts it', async () => {
    const p = uniquePrefix('extend');
    const meta = '{"owner":"nightly","extensions":"2","ttlMs":"100000","padding":"a long field the rewrite keeps"}';
    await d.set(`${p}lock:a`, 'tok', 'PX', 1_000);
    await d.set(`${p}lock:b`, `tok ${meta}`, 'PX', 1_000);
    expect(await extend([`${p}lock:a`, `${p}lock:b`], 'tok', 60_000)).toBe(1);
    for (const k of ['a', 'b']) expect(await d.pttl(`${p}lock:${k}`)).toBeGreaterThan(50_000);
    expect(await d.get(`${p}lock:a`)).toBe('tok');
    const b = (await d.get(`${p}lock:b`))!;
    expect(b.length).toBe(`tok ${meta}`.length);
    expect(b.startsWith('tok {')).toBe(true);
    expect(JSON.parse(b.slice(4).trimEnd())).toEqual({
      owner: 'nightly',
      extensions: '3',
      ttlMs: '60000',
      padding: 'a long field the rewrite keeps',
    });
  });

  it('metadata without a count starts it at 1; a longer rewrite is not cut', async () => {
    const p = uniquePrefix('extend-first');
    await d.set(`${p}lock:a`, 'tok {}', 'PX', 1_000);
    expect(await extend([`${p}lock:a`], 'tok', 30_000)).toBe(1);
    const a = (await d.get(`${p}lock:a`))!;
    expect(JSON.parse(a.slice(4))).toEqual({ extensions: '1', ttlMs: '30000' });
  });

  it('never shortens a lease (PEXPIRE GT)', async () => {
    const p = uniquePrefix('extend-gt');
    await d.set(`${p}lock:a`, 'tok', 'PX', 60_000);
    expect(await extend([`${p}lock:a`], 'tok', 1_000)).toBe(1);
    expect(await d.pttl(`${p}lock:a`)).toBeGreaterThan(50_000);
  });

  it('any key not holding the token (another token, a token sharing its start, gone): 0, and no key is touched', async () => {
    for (const [first, second] of [
      ['tok', 'other'],
      ['other', 'tok'],
      ['tok', 'tokX {"x":1}'],
      ['tok {"x":1}', null],
    ] as const) {
      const p = uniquePrefix('extend-lost');
      await d.set(`${p}lock:a`, first, 'PX', 1_000);
      if (second !== null) await d.set(`${p}lock:b`, second, 'PX', 1_000);
      expect(await extend([`${p}lock:a`, `${p}lock:b`], 'tok', 60_000)).toBe(0);
      expect(await d.get(`${p}lock:a`)).toBe(first);
      expect(await d.pttl(`${p}lock:a`)).toBeLessThanOrEqual(1_000);
      expect(await d.get(`${p}lock:b`)).toBe(second);
    }
  });

  it('a value whose metadata is not a JSON object (not JSON, a number) is extended and left as it is', async () => {
    for (const value of ['tok not-json', 'tok 42']) {
      const p = uniquePrefix('extend-garbage');
      await d.set(`${p}lock:a`, value, 'PX', 1_000);
      expect(await extend([`${p}lock:a`], 'tok', 60_000)).toBe(1);
      expect(await d.get(`${p}lock:a`)).toBe(value);
      expect(await d.pttl(`${p}lock:a`)).toBeGreaterThan(50_000);
    }
  });
});
