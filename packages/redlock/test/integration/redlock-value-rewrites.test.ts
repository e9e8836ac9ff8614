import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { metaTextOf, Redlock, tokenOf } from '@redlock-console/redlock';
import { epochKey } from '../../src/keys';
import { FenceCall, mergeFences } from '../../src/fence-group';
import { decodeCommand } from '../../src/resp';
import { EXTEND_SCRIPT, FENCE_SCRIPT } from '../../src/scripts';
import { uniquePrefix, waitFor } from '@/test/support/cluster';
import { redlockEnv } from '@/test/support/redlock-env';

const env = redlockEnv();

/**
 * The metadata rewrites (the fence round records the fence, an extend counts itself) write the
 * lock's value in place (SETRANGE from 0, padded with spaces: extend.lua), not with SET … KEEPTTL.
 * What must hold: the same token in front (ownership), the same TTL, the metadata read back as
 * written, and — why it changed — a master publishes no `set` for a rewrite, so a `set` on a lock
 * key is always a grant (lib/server/events/keyspace-source.ts relies on it).
 */
describe('lock value rewrites', () => {
  let sub: Redis;
  const seen: Array<{ event: string; key: string }> = [];
  let oldFlags = '';

  beforeAll(async () => {
    const node = env.direct[0]!;
    oldFlags = ((await node.config('GET', 'notify-keyspace-events')) as string[])[1] ?? '';
    await node.config('SET', 'notify-keyspace-events', 'Eg$x');
    sub = node.duplicate();
    sub.on('message', (channel: string, key: string) => seen.push({ event: channel.slice(channel.lastIndexOf(':') + 1), key }));
    await sub.subscribe('__keyevent@0__:set', '__keyevent@0__:setrange', '__keyevent@0__:expire');
  });
  afterAll(async () => {
    sub?.disconnect();
    await env.direct[0]!.config('SET', 'notify-keyspace-events', oldFlags);
  });

  const eventsOn = async (key: string, count: number) => {
    await waitFor(async () => seen.filter((e) => e.key === key).length >= count, 5_000, `${count} events on ${key}`);
    await new Promise((res) => setTimeout(res, 50)); // absence: 50 ms for an event that must not come
    return seen.filter((e) => e.key === key).map((e) => e.event);
  };

  it('a fenced grant and its extensions publish one `set` (the grant); the rewrites keep token and TTL, and pad', async () => {
    const r = new Redlock(env.cluster.urls, { keyPrefix: uniquePrefix('rewrite'), retryCount: 0, nodeTimeoutMs: 1_000 });
    env.redlocks.push(r);
    await r.markNodesClean();
    const key = r.lockKey('report');
    // A foreign key on nodes 4 and 5 while it is granted: the grant needs nodes 1–3, so node 1 is an
    // early voter and its fence is confirmed (on a loaded machine node 1 was once still pending at
    // the decision, its fence never asked for, and the wait below ran out).
    for (const i of [3, 4]) await env.direct[i]!.set(key, 'foreign', 'PX', 60_000);
    const lock = await r.acquire('report', 10_000, { metadata: { owner: 'nightly' } });
    for (const i of [3, 4]) await env.direct[i]!.del(key);
    expect(lock.fence).not.toBeNull();
    // The grant (SET NX PX: `set` and `expire`), then the fence round's rewrite.
    await waitFor(async () => metaTextOf((await env.direct[0]!.get(key)) ?? '')?.includes('"fence"') ?? false, 5_000, 'the fence written');
    expect(await eventsOn(key, 3)).toEqual(['set', 'expire', 'setrange']);
    const fenced = (await env.direct[0]!.get(key))!;
    expect(tokenOf(fenced)).toBe(lock.token);
    expect(JSON.parse(metaTextOf(fenced)!)).toMatchObject({ owner: 'nightly', fence: String(lock.fence), ttlMs: '10000' });
    // The fence round kept the grant's TTL (SET KEEPTTL did; SETRANGE never touches it).
    const ttl = await env.direct[0]!.pttl(key);
    expect(ttl).toBeGreaterThan(9_000);
    expect(ttl).toBeLessThanOrEqual(10_000);

    // An extend to a shorter ttl: PEXPIRE GT refuses to shorten (no `expire`), the rewrite counts it
    // with ttlMs "2000", one character shorter than "10000": padded with one space, read back trimmed.
    await lock.extend(2_000);
    expect(await eventsOn(key, 4)).toEqual(['set', 'expire', 'setrange', 'setrange']);
    const extended = (await env.direct[0]!.get(key))!;
    expect(extended.length).toBe(fenced.length);
    expect(extended.endsWith('} ')).toBe(true);
    expect(metaTextOf(extended)!.endsWith('}')).toBe(true);
    expect(JSON.parse(metaTextOf(extended)!)).toMatchObject({
      owner: 'nightly',
      fence: String(lock.fence),
      extensions: '1',
      ttlMs: '2000',
    });
    expect(await env.direct[0]!.pttl(key)).toBeGreaterThan(8_000);

    // A longer one: `expire`, then the rewrite; the value grows to fit.
    await lock.extend(30_000);
    expect(await eventsOn(key, 6)).toEqual(['set', 'expire', 'setrange', 'setrange', 'expire', 'setrange']);
    expect(JSON.parse(metaTextOf((await env.direct[0]!.get(key))!)!)).toMatchObject({ extensions: '2', ttlMs: '30000' });
    expect(await env.direct[0]!.pttl(key)).toBeGreaterThan(29_000);
    // The token in front still owns the key: the release deletes it everywhere.
    await lock.release();
    for (const c of env.direct) expect(await c.exists(key)).toBe(0);
  });

  it('fence.lua and fence-many.lua pad a shorter metadata, keep the TTL, publish no `set`, and never create a key', async () => {
    const prefix = uniquePrefix('rewrite-scripts');
    const node = env.direct[0]!;
    const epoch = epochKey(prefix);
    const key = (name: string) => `${prefix}lock:${name}`;
    const long = '{"owner":"a-rather-long-owner-name"}';
    await node.set(key('one'), `t1 ${long}`, 'PX', 10_000);
    await node.set(key('many'), `t2 ${long}`, 'PX', 10_000);
    // fence.lua: KEYS epoch + lock keys; ARGV token, fence, metadata.
    expect(await node.eval(FENCE_SCRIPT.source, 2, epoch, key('one'), 't1', '7', '{"fence":"7"}')).toBe(1);
    const [, ...args] = decodeCommand(
      mergeFences([
        new FenceCall(epoch, [key('many')], 't2', 8, '{"fence":"8"}'),
        // Its key is not there: refused, and nothing is written (SETRANGE would create it, without a TTL).
        new FenceCall(epoch, [key('gone')], 't3', 9, '{"fence":"9"}'),
      ]).evalPayload(),
    );
    expect(await node.call('EVAL', ...args)).toEqual([1, 0]);
    for (const [name, token, fence] of [
      ['one', 't1', '7'],
      ['many', 't2', '8'],
    ] as const) {
      const value = (await node.get(key(name)))!;
      expect(value.length).toBe(`t1 ${long}`.length);
      expect(value.startsWith(`${token} {"fence":"${fence}"}`)).toBe(true);
      expect(value.trimEnd()).toBe(`${token} {"fence":"${fence}"}`);
      expect(metaTextOf(value)).toBe(`{"fence":"${fence}"}`);
      expect(await node.pttl(key(name))).toBeGreaterThan(9_000);
      expect(await eventsOn(key(name), 3)).toEqual(['set', 'expire', 'setrange']);
    }
    expect(await node.exists(key('gone'))).toBe(0);
    expect(await node.hget(epoch, 'fence')).toBe('8');
    await node.del(epoch, key('one'), key('many'));
  });
  it('extend.lua leaves a bare token as it is (also named twice), and writes nothing to a key it does not own or that is gone', async () => {
    const prefix = uniquePrefix('rewrite-extend');
    const node = env.direct[0]!;
    const key = (name: string) => `${prefix}lock:${name}`;
    await node.set(key('bare'), 't1', 'PX', 5_000);
    await node.set(key('foreign'), 'other {"owner":"b"}', 'PX', 5_000);
    // A bare token (no metadata to rewrite): the lease only.
    expect(await node.eval(EXTEND_SCRIPT.source, 1, key('bare'), 't1', '20000')).toBe(1);
    expect(await eventsOn(key('bare'), 3)).toEqual(['set', 'expire', 'expire']);
    expect(await node.get(key('bare'))).toBe('t1');
    expect(await node.pttl(key('bare'))).toBeGreaterThan(19_000);
    // A key named twice (a caller's repeated resource): extended, the value still the bare token.
    // (Whether the second PEXPIRE GT lengthens it by a millisecond depends on the server's clock
    // inside a script, read per command or once per script by version: its events are not counted.)
    expect(await node.eval(EXTEND_SCRIPT.source, 2, key('bare'), key('bare'), 't1', '30000')).toBe(1);
    expect(await node.get(key('bare'))).toBe('t1');
    expect(await node.pttl(key('bare'))).toBeGreaterThan(29_000);
    // Not ours, and not there: refused before any write (a SETRANGE would create the missing key, with no TTL).
    expect(await node.eval(EXTEND_SCRIPT.source, 2, key('foreign'), key('gone'), 'other', '20000')).toBe(0);
    expect(await node.eval(EXTEND_SCRIPT.source, 1, key('foreign'), 't1', '20000')).toBe(0);
    expect(await node.exists(key('gone'))).toBe(0);
    expect(await node.get(key('foreign'))).toBe('other {"owner":"b"}');
    expect(await node.pttl(key('foreign'))).toBeLessThanOrEqual(5_000);
    expect(await eventsOn(key('foreign'), 2)).toEqual(['set', 'expire']);
    expect(seen.filter((e) => e.key === key('gone'))).toEqual([]);
    await node.del(key('bare'), key('foreign'));
  });
});
