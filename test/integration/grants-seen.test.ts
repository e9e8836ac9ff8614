import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Redis } from 'ioredis';
import { Redlock } from '@redlock-console/redlock';
import { historyResponseSchema } from '../../lib/api/history';
import { startApi, type ApiHarness } from '../support/api';

/**
 * The Overview's activity chart counted only the console's own acquires ("No acquires in
 * this window" while applications held 24 locks). Grants seen on the masters come from their
 * keyspace notifications (lib/server/grants-seen.ts), which the console turns on where the masters
 * are its own: this checks both that grants taken by another client of the package are counted,
 * and that the console's CONFIG SET of notify-keyspace-events does not trip the lock core's own
 * checks (probe.lua: restarts, data replaced, evictions, RESETSTAT): no quarantine starts, every
 * node votes.
 */
let api: ApiHarness;
let stop: () => void = () => undefined;
let app: Redlock | null = null;
const admins: Redis[] = [];
beforeAll(async () => {
  api = await startApi({ nodes: 3, maxTtlMs: 10_000 });
});
afterAll(async () => {
  stop();
  await app?.quit();
  for (const c of admins) c.disconnect();
  await api?.stop();
});

describe('grants seen on the masters', () => {
  it("counts the grants another client of the package takes, and turning notifications on leaves the core's checks quiet", async () => {
    for (const url of api.cluster.urls) admins.push(new Redis(url));
    // Notifications off, as a master the console has never seen has them.
    for (const admin of admins) await admin.config('SET', 'notify-keyspace-events', '');
    // The application: the package, its own connections, checks on (the defaults).
    app = new Redlock(api.cluster.urls, { keyPrefix: 'rl:', maxTtlMs: api.maxTtlMs });
    const quarantines: unknown[] = [];
    app.on('quarantine', (event) => quarantines.push(event));
    const warm = await app.acquire('grants-seen/warm', 5_000);
    await (
      await warm.release()
    ).settled;

    const { resetHistory, readHistory } = await import('../../lib/server/history');
    const { startGrantCounter } = await import('../../lib/server/grants-seen');
    resetHistory();
    // Subscriptions to each master's keyevent channels (the hub's keyspace source): before, and once the counter's are in.
    const keyevents = () =>
      Promise.all(
        admins.map(async (admin) => {
          const channels = (await admin.call('PUBSUB', 'CHANNELS', '__keyevent@0__:*')) as string[];
          if (channels.length === 0) return 0;
          const counts = (await admin.call('PUBSUB', 'NUMSUB', ...channels)) as Array<string | number>;
          return counts.filter((_, i) => i % 2 === 1).reduce<number>((s, n) => s + Number(n), 0);
        }),
      );
    const subscribedBefore = await keyevents();
    stop = startGrantCounter();
    // The console turns them on (the masters are its own: sandbox mode).
    await vi.waitFor(
      async () => {
        for (const admin of admins) expect(((await admin.config('GET', 'notify-keyspace-events')) as string[])[1]).not.toBe('');
      },
      { timeout: 10_000 },
    );
    const res0 = await api.call('GET', '/api/history', { as: 'viewer' });
    const grants0 = historyResponseSchema.parse(await res0.json()).grants;
    expect(grants0).toEqual({ counting: true, polledNodes: [], note: null });
    // Subscribed on every master: a grant from now on is seen.
    await vi.waitFor(async () => expect((await keyevents()).every((n, i) => n > subscribedBefore[i]!)).toBe(true), { timeout: 10_000 });

    const locks = [];
    for (let i = 0; i < 5; i++) locks.push(await app.acquire(`grants-seen/${i}`, 10_000));
    const sum = (key: 'grantsSeen' | 'acquireOk') => readHistory('1s').reduce((s, b) => s + (b[key] ?? 0), 0);
    await vi.waitFor(() => expect(sum('grantsSeen')).toBe(5), { timeout: 10_000 });
    // None of them went through the console's own core.
    expect(sum('acquireOk')).toBe(0);
    const res = await api.call('GET', '/api/history', { as: 'viewer' });
    const body = historyResponseSchema.parse(await res.json());
    expect(body.buckets.reduce((s, b) => s + (b.grantsSeen ?? 0), 0)).toBe(5);

    // The core's checks after the CONFIG SET: every node votes, no quarantine was started.
    const after = await app.acquire('grants-seen/after', 5_000);
    expect(after.votes.filter((v) => v.reason === 'quarantined')).toEqual([]);
    expect(quarantines).toEqual([]);
    for (const lock of [...locks, after]) await (await lock.release()).settled;
  });
});
