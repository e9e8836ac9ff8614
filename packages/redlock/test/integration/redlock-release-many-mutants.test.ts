import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { RELEASE_MANY_SCRIPT } from '../../src/scripts';
import { uniquePrefix } from '@/test/support/cluster';
import { scriptNode } from '@/test/support/script-node';

// release-many.lua run directly on one real redis-server: per member, in order, the compare-and-
// delete of release.lua, counted; a key held by anyone else is never touched; each deleted key is
// published on the member's channel with its resource name (none for an empty channel). Written
// for release-many.lua's Lua mutants (scripts/mutation/lua-mutants.ts, docs/mutation.md).
let d: Redis;
let sub: Redis;
const heard: Array<[string, string]> = [];
scriptNode(async (client, cluster) => {
  d = client;
  sub = cluster.client(1);
  await sub.connect();
  sub.on('message', (channel: string, message: string) => heard.push([channel, message]));
});

type Member = { token: string; channel: string; keys: Array<[string, string]> };
const releaseMany = (members: Member[]) =>
  d.eval(
    RELEASE_MANY_SCRIPT.source,
    members.reduce((n, m) => n + m.keys.length, 0),
    ...members.flatMap((m) => m.keys.map(([key]) => key)),
    ...members.flatMap((m) => [m.token, String(m.keys.length), m.channel, ...m.keys.map(([, resource]) => resource)]),
  ) as Promise<number[]>;

describe('release-many.lua', () => {
  it('deletes each member’s held keys, counts them in order, publishes each, and touches nothing else', async () => {
    const p = uniquePrefix('release-many');
    const channel = `${p}released`;
    await sub.subscribe(channel);
    await d.set(`${p}lock:a`, 't1', 'PX', 60_000);
    await d.set(`${p}lock:b1`, 't2 {"x":1}', 'PX', 60_000);
    await d.set(`${p}lock:b2`, 'someone-else', 'PX', 60_000);
    await d.set(`${p}lock:b3`, 't2', 'PX', 60_000);
    await d.set(`${p}lock:c`, 't3X', 'PX', 60_000);
    await d.set(`${p}lock:e`, 't5', 'PX', 60_000);
    const replies = await releaseMany([
      { token: 't1', channel, keys: [[`${p}lock:a`, 'a']] },
      {
        token: 't2',
        channel,
        keys: [
          [`${p}lock:b1`, 'b1'],
          [`${p}lock:b2`, 'b2'],
          [`${p}lock:b3`, 'b3'],
        ],
      },
      { token: 't3', channel, keys: [[`${p}lock:c`, 'c']] },
      { token: 't4', channel, keys: [[`${p}lock:missing`, 'missing']] },
      { token: 't5', channel: '', keys: [[`${p}lock:e`, 'e']] },
    ]);
    expect(replies).toEqual([1, 2, 0, 0, 1]);
    expect(await d.exists(`${p}lock:a`, `${p}lock:b1`, `${p}lock:b3`, `${p}lock:e`)).toBe(0);
    expect(await d.get(`${p}lock:b2`)).toBe('someone-else');
    expect(await d.get(`${p}lock:c`)).toBe('t3X');
    // A marker published after the script: every message of the script came before it.
    await d.publish(channel, 'end');
    const deadline = Date.now() + 10_000;
    while (!heard.some(([, m]) => m === 'end') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20)); // poll: until the last message is heard
    expect(heard.filter(([c]) => c === channel).map(([, m]) => m)).toEqual(['a', 'b1', 'b3', 'end']);
  });
});
