import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { epochKey, legacyFenceKey } from '@redlock-console/redlock';
import { RESEED_SCRIPT } from '../../src/scripts';
import { uniquePrefix } from '@/test/support/cluster';
import { scriptNode } from '@/test/support/script-node';

// reseed.lua run directly on one real redis-server: only for the quarantine it was started for
// (createdAt) and only with a reseed pending; the register goes to max(register, old key, floor),
// never lower; the old key is kept in step; the flag is cleared. Written for reseed.lua's Lua
// mutants (scripts/mutation/lua-mutants.ts, docs/mutation.md).
let d: Redis;
scriptNode((client) => void (d = client));

const reseed = (p: string, createdAt: string, floor: string) =>
  d.eval(RESEED_SCRIPT.source, 2, epochKey(p), legacyFenceKey(p), createdAt, floor) as Promise<[number, string]>;

async function pending(name: string, fence: string | null, legacy: string | null = null): Promise<string> {
  const p = uniquePrefix(name);
  await d.hset(epochKey(p), 'createdAt', '1000', 'reseed', '1');
  if (fence !== null) await d.hset(epochKey(p), 'fence', fence);
  if (legacy !== null) await d.set(legacyFenceKey(p), legacy);
  return p;
}

describe('reseed.lua', () => {
  it('raises the register to a higher floor and clears the flag', async () => {
    const p = await pending('reseed-up', '100');
    expect(await reseed(p, '1000', '250')).toEqual([1, '250']);
    expect(await d.hget(epochKey(p), 'fence')).toBe('250');
    expect(await d.hexists(epochKey(p), 'reseed')).toBe(0);
    expect(await d.exists(legacyFenceKey(p))).toBe(0);
  });

  it('keeps a register above the floor, and the old key when it is the highest; the old key is kept in step', async () => {
    const p = await pending('reseed-keep', '300');
    expect(await reseed(p, '1000', '250')).toEqual([1, '300']);
    expect(await d.hget(epochKey(p), 'fence')).toBe('300');
    // The old key above both the hash's register and the floor: it is the register, written to
    // both. (reseed.lua wrote the hash's lower value to both, the old key included: the register
    // went down, and a later grant's fence could repeat one already issued.)
    const o = await pending('reseed-legacy-high', '100', '400');
    expect(await reseed(o, '1000', '250')).toEqual([1, '400']);
    expect(await d.hget(epochKey(o), 'fence')).toBe('400');
    expect(await d.get(legacyFenceKey(o))).toBe('400');
    const q = await pending('reseed-legacy-mid', '100', '200');
    expect(await reseed(q, '1000', '250')).toEqual([1, '250']);
    expect(await d.get(legacyFenceKey(q))).toBe('250');
    const r = await pending('reseed-legacy-low', '100', '50');
    expect(await reseed(r, '1000', '250')).toEqual([1, '250']);
    expect(await d.get(legacyFenceKey(r))).toBe('250');
    const s = await pending('reseed-no-register', null);
    expect(await reseed(s, '1000', '0')).toEqual([1, '0']);
    expect(await d.hget(epochKey(s), 'fence')).toBe('0');
  });

  it("an old key below the hash's register never lowers it, even with the floor between them", async () => {
    // A `legacy or …` slip would take any existing old key as the register: 300 in the hash, 200 in
    // the old key and a floor of 250 gave 250, below a fence already issued (fence order).
    const p = await pending('reseed-legacy-below', '300', '200');
    expect(await reseed(p, '1000', '250')).toEqual([1, '300']);
    expect(await d.hget(epochKey(p), 'fence')).toBe('300');
    expect(await d.get(legacyFenceKey(p))).toBe('300');
  });

  it('a value that is not a number (register, old key or floor) counts as 0 and is never written as the register', async () => {
    // Nothing in the lock core writes one; a hand edit or another tool might. Such a value must not
    // win over a number, nor stop the reseed with a script error.
    const p = await pending('reseed-bad-register', 'x', '1');
    expect(await reseed(p, '1000', '0')).toEqual([1, '1']);
    expect(await d.hget(epochKey(p), 'fence')).toBe('1');
    const q = await pending('reseed-bad-legacy', null, 'x');
    expect(await reseed(q, '1000', '0')).toEqual([1, '0']);
    expect(await d.get(legacyFenceKey(q))).toBe('0');
    const r = await pending('reseed-bad-floor', null);
    expect(await reseed(r, '1000', 'x')).toEqual([1, '0']);
    expect(await d.hget(epochKey(r), 'fence')).toBe('0');
  });

  it('another quarantine (createdAt), or no reseed pending: not applied, nothing written', async () => {
    const p = await pending('reseed-changed', '100');
    expect(await reseed(p, '999', '250')).toEqual([0, 'changed']);
    expect(await d.hget(epochKey(p), 'fence')).toBe('100');
    expect(await d.hget(epochKey(p), 'reseed')).toBe('1');
    await d.hdel(epochKey(p), 'reseed');
    expect(await reseed(p, '1000', '250')).toEqual([0, 'changed']);
    expect(await d.hget(epochKey(p), 'fence')).toBe('100');
    await d.hset(epochKey(p), 'reseed', '0');
    expect(await reseed(p, '1000', '250')).toEqual([0, 'changed']);
    expect(await d.hget(epochKey(p), 'fence')).toBe('100');
  });
});
