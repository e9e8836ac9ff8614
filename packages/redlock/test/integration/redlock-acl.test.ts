import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isRedlockError, Redlock, type Lock, type RedlockSettings } from '@redlock-console/redlock';
import { NO_PERSISTENCE, startRedisNodes, type RedisNode } from '@/test/support/redis-nodes';
import { waitersAsleep } from '@/test/support/waiters';

// The ACL the lock core needs (README "ACL"), on real redis-server: a user holding exactly the
// documented commands, keys `~<prefix>*` and channel `&<prefix>released` runs every operation, and
// not one command of it is refused (ACL LOG stays empty); a user without the channel still locks,
// its waiters poll, its releases report what they deleted; a typical app user (`-@dangerous`,
// which removes INFO) is refused in a way the README explains, and `+info` fixes it.

/** The command set of README "ACL" (the first test checks the README's SETUSER line is exactly this). */
const LOCK_CORE_COMMANDS = [
  'get',
  'set',
  'del',
  'exists',
  'hget',
  'hmget',
  'hset',
  'hdel',
  'pexpire',
  'setrange',
  'eval',
  'evalsha',
  'script|load',
  'script|exists',
  'multi',
  'exec',
  'watch',
  'unwatch',
  'time',
  'info',
  'publish',
  'subscribe',
  'unsubscribe',
  'ping',
  'hello',
  'quit',
] as const;

let nodes: RedisNode[] = [];
const redlocks: Redlock[] = [];

beforeAll(async () => {
  nodes = await startRedisNodes(() => NO_PERSISTENCE, 3);
});

afterAll(async () => {
  await Promise.all(redlocks.map((r) => r.quit()));
  await Promise.all(nodes.map((n) => n.stop()));
});

async function setUser(user: string, rules: string[]): Promise<string[]> {
  for (const n of nodes) {
    await n.client.call('ACL', 'SETUSER', user, 'reset', 'on', `>${user}-password`, ...rules);
    await n.client.call('ACL', 'LOG', 'RESET');
  }
  return nodes.map((n) => `redis://${user}:${user}-password@127.0.0.1:${n.port}`);
}

function redlock(urls: string[], keyPrefix: string, settings: Partial<RedlockSettings> = {}): Redlock {
  const r = new Redlock(urls, { keyPrefix, retryCount: 0, ...settings });
  redlocks.push(r);
  return r;
}

/** Every ACL LOG entry of the nodes (what the server refused, and why), as `reason object`. */
async function aclDenials(user: string): Promise<string[]> {
  const out: string[] = [];
  for (const n of nodes) {
    const entries = (await n.client.call('ACL', 'LOG')) as unknown[][];
    for (const entry of entries) {
      const fields = new Map<string, unknown>();
      for (let i = 0; i + 1 < entry.length; i += 2) fields.set(String(entry[i]), entry[i + 1]);
      if (fields.get('username') === user) out.push(`${String(fields.get('reason'))} ${String(fields.get('object'))}`);
    }
  }
  return out;
}

const exactRules = (prefix: string, channel = true) => [
  'resetkeys',
  `~${prefix}*`,
  'resetchannels',
  ...(channel ? [`&${prefix}released`] : []),
  '-@all',
  ...LOCK_CORE_COMMANDS.map((c) => `+${c}`),
];

describe('the lock core as an ACL user holding exactly the documented commands', () => {
  it("is the README's ACL SETUSER line: keys ~<prefix>*, channel &<prefix>released, -@all and these commands", () => {
    const readme = readFileSync(join(import.meta.dirname, '..', '..', 'README.md'), 'utf8');
    const line = readme.split('\n').find((l) => l.startsWith('ACL SETUSER lockcore '))!;
    const words = line.split(' ');
    expect(words.slice(0, 9)).toEqual([
      'ACL',
      'SETUSER',
      'lockcore',
      'on',
      '>password',
      'resetkeys',
      '~rl:*',
      'resetchannels',
      '&rl:released',
    ]);
    expect(words[9]).toBe('-@all');
    expect(words.slice(10)).toEqual(LOCK_CORE_COMMANDS.map((c) => `+${c}`));
  });

  it('marks nodes clean, acquires (fenced), extends, wakes a waiter by pub/sub, releases and runs using(): nothing refused', async () => {
    const prefix = 'acl-exact:';
    const urls = await setUser('lockcore', exactRules(prefix));
    const a = redlock(urls, prefix);
    const b = redlock(urls, prefix);
    const errors: string[] = [];
    for (const r of [a, b]) r.on('node-error', (e) => errors.push(`${e.node}: ${e.error.message}`));

    await a.markNodesClean();
    // The sentinel is on every node: mark-clean ran there (not only a node-error).
    for (const n of nodes) expect(await n.client.hget(`${prefix}epoch`, 'createdAt')).not.toBeNull();

    const first = await a.acquire('invoice', 10_000, { metadata: { purpose: 'acl' } });
    expect(first.fence).not.toBeNull();
    const extended = await first.extend(10_000);
    expect(extended.extensions).toBe(1);
    const multi = await a.acquire(['m1', 'm2'], 5_000);
    expect((await (await multi.release()).settled).deleted).toBe(3); // nodes on which its keys were deleted

    // A waiter with a 20 s retry delay gets the lock at once: the release's PUBLISH on
    // &<prefix>released woke it (polling would take 20 s).
    const waiting = b.acquire('invoice', 5_000, { retryCount: 1, retryDelayMs: 20_000, retryJitterMs: 0 });
    await waitersAsleep(b); // failed its first attempt, subscribed, asleep
    const releasedAt = performance.now();
    const released = await (await first.release()).settled;
    expect(released).toMatchObject({ deleted: 3, complete: true });
    const second = await waiting;
    expect(performance.now() - releasedAt).toBeLessThan(10_000);
    expect(BigInt(second.fence!)).toBeGreaterThan(BigInt(first.fence!));
    expect((await (await second.release()).settled).deleted).toBe(3);

    // using(): automatic extension on a short lease.
    const extensions = await a.using('job', 1_000, async (signal, lock) => {
      // work: the holder's work outlasts its 1 s lease
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(signal.aborted).toBe(false);
      return lock.extensions;
    });
    expect(extensions).toBeGreaterThanOrEqual(1);

    // Token-only operations (the HTTP lock service's) too.
    const held = await a.acquire('token', 5_000, { fenced: false });
    expect((await a.extendToken('token', held.token, 5_000)).votes.filter((v) => v.vote === 'for').length).toBeGreaterThanOrEqual(2);
    expect((await (await a.releaseToken('token', held.token)).settled).deleted).toBe(3);

    expect(errors).toEqual([]);
    expect(await aclDenials('lockcore')).toEqual([]);
  }, 60_000);
});

describe('an ACL user without &<prefix>released', () => {
  it('locks, extends and fences; a waiter falls back to polling and still gets the lock; releases report true results', async () => {
    const prefix = 'acl-nochan:';
    const urls = await setUser('nochannel', exactRules(prefix, false));
    const a = redlock(urls, prefix);
    const b = redlock(urls, prefix);
    await a.markNodesClean();
    for (const n of nodes) expect(await n.client.hget(`${prefix}epoch`, 'createdAt')).not.toBeNull();

    const first = await a.acquire('r', 10_000);
    await first.extend(10_000);
    const waiting = b.acquire('r', 5_000, { retryCount: 100, retryDelayMs: 200, retryJitterMs: 0 });
    // pace: the waiter retries against the held lock a while
    await new Promise((resolve) => setTimeout(resolve, 300));
    const result = await first.release();
    expect(result.deleted).toBeGreaterThanOrEqual(2);
    expect(result.votes.filter((v) => v.vote === 'for').length).toBeGreaterThanOrEqual(2);
    const settled = await result.settled;
    expect(settled).toMatchObject({ deleted: 3, complete: true });
    expect(settled.votes.map((v) => v.reason)).toEqual(['ok', 'ok', 'ok']);
    const second = await waiting;
    expect(BigInt(second.fence!)).toBeGreaterThan(BigInt(first.fence!));
    expect((await (await second.release()).settled).deleted).toBe(3);
    // What was refused is only the channel: the wake-up publish and the waiter's subscribe.
    const denials = await aclDenials('nochannel');
    expect(denials.length).toBeGreaterThan(0);
    expect(new Set(denials)).toEqual(new Set(['channel ' + `${prefix}released`]));
  }, 60_000);
});

describe('a typical app user with -@dangerous', () => {
  it('is refused on every node; the votes carry Redis ACL message and ACL LOG names INFO; +info fixes it', async () => {
    const prefix = 'acl-app:';
    const urls = await setUser('app', ['~*', '&*', '+@all', '-@dangerous']);
    const r = redlock(urls, prefix);
    const errors: string[] = [];
    r.on('node-error', (e) => errors.push(e.error.message));
    // markNodesClean() is refused on every node too, and says so: it does not resolve as if the
    // cluster were initialised.
    await expect(r.markNodesClean()).rejects.toMatchObject({
      name: 'QuorumUnavailableError',
      message: expect.stringMatching(/0 of 3 nodes marked clean.*can't run this command/),
    });
    const failure = await r.acquire('r', 5_000).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isRedlockError(failure) && failure.name).toBe('QuorumUnavailableError');
    const details = (failure as { votes: { detail?: string }[] }).votes.map((v) => v.detail ?? '');
    // Redis says a script's command was refused but, inside a script, not which one (README "ACL").
    expect(details.some((d) => /can't run this command/.test(d))).toBe(true);
    expect(errors.some((m) => /can't run this command/.test(m))).toBe(true);
    // ACL LOG on the node does name it: INFO, the only @dangerous command the core runs.
    expect(new Set(await aclDenials('app'))).toEqual(new Set(['command info']));

    // The fix the README gives: the same user with +info.
    for (const n of nodes) await n.client.call('ACL', 'SETUSER', 'app', '+info');
    const fixed = redlock(urls, 'acl-app-fixed:');
    await fixed.markNodesClean();
    const lock: Lock = await fixed.acquire('r', 5_000);
    expect(lock.fence).not.toBeNull();
    expect((await (await lock.release()).settled).deleted).toBe(3);
  }, 60_000);
});
