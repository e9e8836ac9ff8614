import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { epochKey } from '@redlock-console/redlock';
import { FENCE_MANY_SCRIPT, FENCE_SCRIPT } from '../../src/scripts';
import { uniquePrefix } from '@/test/support/cluster';
import { scriptNode } from '@/test/support/script-node';

// fence.lua and fence-many.lua run directly on one real redis-server: the compare (every key holds
// the token), the register raised and never lowered, the metadata rewrite (same token, same TTL,
// padded to the old length), and nothing written for a member that lost a key. Written for the
// Lua mutants of both scripts (scripts/mutation/lua-mutants.ts, docs/mutation.md).
let d: Redis;
scriptNode((client) => void (d = client));

const fence = (keys: string[], token: string, f: number | string, meta = '') =>
  d.eval(FENCE_SCRIPT.source, keys.length, ...keys, token, String(f), meta) as Promise<number>;
const register = async (prefix: string) => Number((await d.hget(epochKey(prefix), 'fence')) ?? 0);

describe('fence.lua', () => {
  it('raises the register to the fence when every key holds the token (bare or with metadata), never lowers it', async () => {
    const p = uniquePrefix('fence-raise');
    await d.set(`${p}lock:a`, 'tok', 'PX', 60_000);
    await d.set(`${p}lock:b`, 'tok {"owner":"x"}', 'PX', 60_000);
    await d.hset(epochKey(p), 'fence', '100');
    expect(await fence([epochKey(p), `${p}lock:a`, `${p}lock:b`], 'tok', 150)).toBe(1);
    expect(await register(p)).toBe(150);
    expect(await fence([epochKey(p), `${p}lock:a`], 'tok', 120)).toBe(1);
    expect(await register(p)).toBe(150);
    // The values are left alone without metadata.
    expect(await d.get(`${p}lock:a`)).toBe('tok');
    expect(await d.get(`${p}lock:b`)).toBe('tok {"owner":"x"}');
  });

  it('a register that does not exist yet is raised from 0', async () => {
    const p = uniquePrefix('fence-none');
    await d.set(`${p}lock:a`, 'tok', 'PX', 60_000);
    expect(await fence([epochKey(p), `${p}lock:a`], 'tok', 1)).toBe(1);
    expect(await register(p)).toBe(1);
  });

  it('any key not holding the token (another token, a token sharing its start, missing): 0, nothing written', async () => {
    for (const [first, second] of [
      ['other', 'tok'],
      ['tok', 'other {"x":1}'],
      ['tok', 'tokX {"x":1}'],
      ['tokX', 'tok'],
      ['tok', null],
    ] as const) {
      const p = uniquePrefix('fence-lost');
      await d.set(`${p}lock:a`, first, 'PX', 60_000);
      if (second !== null) await d.set(`${p}lock:b`, second, 'PX', 60_000);
      await d.hset(epochKey(p), 'fence', '100');
      expect(await fence([epochKey(p), `${p}lock:a`, `${p}lock:b`], 'tok', 150, '{"fence":"150"}')).toBe(0);
      expect(await register(p)).toBe(100);
      expect(await d.get(`${p}lock:a`)).toBe(first);
      expect(await d.get(`${p}lock:b`)).toBe(second);
    }
  });

  it('writes the metadata behind the token on every key, padded to the old length, keeping the TTL', async () => {
    const p = uniquePrefix('fence-meta');
    const long = 'tok {"owner":"a long owner name, longer than the new metadata"}';
    await d.set(`${p}lock:a`, long, 'PX', 60_000);
    await d.set(`${p}lock:b`, 'tok', 'PX', 60_000);
    expect(await fence([epochKey(p), `${p}lock:a`, `${p}lock:b`], 'tok', 7, '{"fence":"7"}')).toBe(1);
    const a = (await d.get(`${p}lock:a`))!;
    expect(a).toBe(`tok {"fence":"7"}`.padEnd(long.length, ' '));
    expect(await d.get(`${p}lock:b`)).toBe('tok {"fence":"7"}');
    for (const k of ['a', 'b']) expect(await d.pttl(`${p}lock:${k}`)).toBeGreaterThan(50_000);
  });
});

const fenceMany = (p: string, members: Array<{ token: string; fence: number; meta?: string; keys: string[] }>) =>
  d.eval(
    FENCE_MANY_SCRIPT.source,
    1 + members.reduce((n, m) => n + m.keys.length, 0),
    epochKey(p),
    ...members.flatMap((m) => m.keys),
    ...members.flatMap((m) => [m.token, String(m.fence), m.meta ?? '', String(m.keys.length)]),
  ) as Promise<number[]>;

describe('fence-many.lua', () => {
  it('answers each member in order; the register goes to the highest fence among the members that hold their keys', async () => {
    const p = uniquePrefix('fence-many');
    await d.set(`${p}lock:a`, 't1', 'PX', 60_000);
    await d.set(`${p}lock:b1`, 't2', 'PX', 60_000);
    await d.set(`${p}lock:b2`, 't2 {"x":1}', 'PX', 60_000);
    await d.set(`${p}lock:c`, 'someone-else', 'PX', 60_000);
    await d.set(`${p}lock:e`, 't5', 'PX', 60_000);
    await d.hset(epochKey(p), 'fence', '100');
    const replies = await fenceMany(p, [
      { token: 't1', fence: 120, keys: [`${p}lock:a`] },
      { token: 't2', fence: 140, meta: '{"fence":"140"}', keys: [`${p}lock:b1`, `${p}lock:b2`] },
      { token: 't3', fence: 900, meta: '{"fence":"900"}', keys: [`${p}lock:c`] }, // lost: never counts
      { token: 't4', fence: 950, keys: [`${p}lock:missing`] }, // lost
      { token: 't5', fence: 130, keys: [`${p}lock:e`] },
    ]);
    expect(replies).toEqual([1, 1, 0, 0, 1]);
    expect(await register(p)).toBe(140);
    expect(await d.get(`${p}lock:b1`)).toBe('t2 {"fence":"140"}');
    expect(await d.get(`${p}lock:b2`)).toBe('t2 {"fence":"140"}');
    expect(await d.get(`${p}lock:c`)).toBe('someone-else');
    expect(await d.get(`${p}lock:a`)).toBe('t1');
  });

  it('a member whose second key is lost writes nothing, and the next member is still read from the right keys', async () => {
    const p = uniquePrefix('fence-many-partial');
    await d.set(`${p}lock:a1`, 't1', 'PX', 60_000);
    await d.set(`${p}lock:a2`, 'other', 'PX', 60_000);
    await d.set(`${p}lock:b`, 't2 {"owner":"a longer owner than the fence metadata"}', 'PX', 60_000);
    await d.hset(epochKey(p), 'fence', '100');
    const replies = await fenceMany(p, [
      { token: 't1', fence: 500, meta: '{"fence":"500"}', keys: [`${p}lock:a1`, `${p}lock:a2`] },
      { token: 't2', fence: 101, meta: '{"fence":"101"}', keys: [`${p}lock:b`] },
    ]);
    expect(replies).toEqual([0, 1]);
    expect(await d.get(`${p}lock:a1`)).toBe('t1');
    expect(await register(p)).toBe(101);
    const b = (await d.get(`${p}lock:b`))!;
    expect(b).toBe('t2 {"fence":"101"}'.padEnd('t2 {"owner":"a longer owner than the fence metadata"}'.length, ' '));
    expect(await d.pttl(`${p}lock:b`)).toBeGreaterThan(50_000);
  });

  it('never lowers the register, and leaves it unwritten when every member lost', async () => {
    const p = uniquePrefix('fence-many-low');
    await d.set(`${p}lock:a`, 't1', 'PX', 60_000);
    await d.hset(epochKey(p), 'fence', '1000');
    expect(await fenceMany(p, [{ token: 't1', fence: 999, keys: [`${p}lock:a`] }])).toEqual([1]);
    expect(await register(p)).toBe(1000);
    const q = uniquePrefix('fence-many-none');
    expect(await fenceMany(q, [{ token: 't1', fence: 5, keys: [`${q}lock:a`] }])).toEqual([0]);
    expect(await d.exists(epochKey(q))).toBe(0);
    const r = uniquePrefix('fence-many-fresh');
    await d.set(`${r}lock:a`, 't1', 'PX', 60_000);
    expect(await fenceMany(r, [{ token: 't1', fence: 5, keys: [`${r}lock:a`] }])).toEqual([1]);
    expect(await register(r)).toBe(5);
    // The lowest fence there is (every voter's register 0): 1 is raised too.
    const one = uniquePrefix('fence-many-one');
    await d.set(`${one}lock:a`, 't1', 'PX', 60_000);
    expect(await fenceMany(one, [{ token: 't1', fence: 1, keys: [`${one}lock:a`] }])).toEqual([1]);
    expect(await register(one)).toBe(1);
  });
});
