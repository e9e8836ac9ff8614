import { describe, expect, it } from 'vitest';
import { PasswordWork, PasswordWorkBusy, type Lane } from '../../lib/server/auth/password-work';

/**
 * The budget for password work. A flood of logins must not buy the console's
 * CPU: at most `concurrency` scrypts at once and `perSecond` a second, a bounded queue with a
 * deadline, beyond which an attempt is refused without any work; the operator's own browser waits
 * in a lane served first and not held to the rate.
 */
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function harness(limits = { concurrency: 1, perSecond: 1_000, queue: 3, trustedQueue: 2, deadlineMs: 400 }) {
  const work = new PasswordWork(limits);
  let running = 0;
  let most = 0;
  const order: string[] = [];
  const attempt = (name: string, lane: Lane = 'other', ms = 30) =>
    work
      .run(lane, async () => {
        running++;
        most = Math.max(most, running);
        order.push(name);
        // work: the password work
        await sleep(ms);
        running--;
        return name;
      })
      .then(
        () => 'checked' as const,
        (err: unknown) => (err instanceof PasswordWorkBusy ? ('refused' as const) : Promise.reject(err)),
      );
  return { work, attempt, order, most: () => most };
}

describe('the password-work budget', () => {
  it('runs one at a time, queues a bounded number, and refuses the rest at once, without running them', async () => {
    const h = harness();
    const outcomes = await Promise.all(Array.from({ length: 10 }, (_, i) => h.attempt(`a${i}`)));
    expect(h.most()).toBe(1);
    expect(outcomes.filter((o) => o === 'checked')).toHaveLength(1 + 3); // one running, three waiting
    expect(outcomes.filter((o) => o === 'refused')).toHaveLength(6);
    expect(h.order).toEqual(['a0', 'a1', 'a2', 'a3']);
    expect(h.work.stats()).toMatchObject({ running: 0, waiting: 0, done: 4, refused: 6 });
  });

  it('refuses a waiting attempt at its deadline', async () => {
    const h = harness();
    const slow = h.attempt('slow', 'other', 700);
    const waiting = h.attempt('late');
    expect(await waiting).toBe('refused');
    expect(await slow).toBe('checked');
    expect(h.order).toEqual(['slow']);
  });

  it("serves the trusted lane first: a flood of strangers cannot keep the operator's browser out", async () => {
    const h = harness();
    const strangers = Array.from({ length: 8 }, (_, i) => h.attempt(`s${i}`));
    const operator = h.attempt('operator', 'trusted');
    expect(await operator).toBe('checked');
    await Promise.all(strangers);
    expect(h.order.slice(0, 2)).toEqual(['s0', 'operator']); // right after the one already running
  });

  it('a failing check frees its place', async () => {
    const work = new PasswordWork({ concurrency: 1, perSecond: 1_000, queue: 1, trustedQueue: 1, deadlineMs: 400 });
    await expect(work.run('other', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(work.run('other', () => Promise.resolve(7))).resolves.toBe(7);
    expect(work.stats()).toMatchObject({ running: 0, waiting: 0 });
  });

  it('starts at most perSecond a second for strangers; the trusted lane is not held to it', async () => {
    const h = harness({ concurrency: 1, perSecond: 4, queue: 20, trustedQueue: 2, deadlineMs: 5_000 });
    const started = Date.now();
    const at: number[] = [];
    const strangers = Array.from({ length: 8 }, (_, i) => h.attempt(`s${i}`, 'other', 1).then((o) => (at.push(Date.now() - started), o)));
    // pace: the strangers are queued before the operator comes
    await sleep(50);
    const operator = Date.now();
    expect(await h.attempt('operator', 'trusted', 1)).toBe('checked');
    expect(Date.now() - operator).toBeLessThan(150); // not behind the strangers' rate
    expect(await Promise.all(strangers)).toEqual(Array(8).fill('checked'));
    // Four at once (the bucket starts full), then one every 250 ms.
    expect(at.filter((t) => t < 100)).toHaveLength(4);
    expect(Math.max(...at)).toBeGreaterThanOrEqual(900);
    expect(Math.max(...at)).toBeLessThan(1_500);
  });
});
