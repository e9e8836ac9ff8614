import { describe, expect, it } from 'vitest';
import type { LockNode } from '../../src/node';
import { ScriptCall } from '../../src/resp';
import { Round } from '../../src/round';
import { RELEASE_SCRIPT } from '../../src/scripts';

/** Fake nodes; `stalled` records each markStalled(waitedMs) a round makes. */
const nodes = (n: number, stalled: string[] = []) =>
  Array.from({ length: n }, (_, i) => ({
    index: i,
    label: `h:${i}`,
    markStalled: (waitedMs: number) => stalled.push(`h:${i} ${waitedMs}`),
  })) as unknown as LockNode[];
const accept = (round: Round, i: number, reply: unknown) => (reply === 'yes' ? round.accept(i) : round.reject(i, 'contended'));

/** Node i's reply, as a node delivers it (round.reply's callback), from a promise. */
function feed(round: Round, i: number, reply: Promise<unknown>): void {
  const deliver = round.reply(i);
  reply.then(
    (value) => deliver(null, value),
    (err: unknown) => deliver(err instanceof Error ? err : new Error(String(err)), undefined),
  );
}

function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('Round: one deadline, early decisions', () => {
  it('decides at the quorum-th vote for; the unanswered vote `pending` and late replies change nothing', async () => {
    const replies = Array.from({ length: 5 }, () => deferred<unknown>());
    const round = new Round(nodes(5), 3, false, 10_000, accept, () => undefined);
    replies.forEach((d, i) => feed(round, i, d.promise));
    for (const i of [0, 2, 4]) replies[i]!.resolve('yes');
    await round.done;
    expect(round.forCount).toBe(3);
    expect(round.timedOut).toBe(false);
    expect(round.votes.map((v) => v.reason)).toEqual(['ok', 'pending', 'ok', 'pending', 'ok']);
    replies[1]!.resolve('no');
    // absence: 5 ms in which the late reply must not change the vote
    await new Promise((r) => setTimeout(r, 5));
    expect(round.votes[1]!.reason).toBe('pending');
    expect(Object.isFrozen(round.votes)).toBe(true);
  });

  it('decides as soon as a quorum is out of reach, without waiting for the deadline', async () => {
    const replies = Array.from({ length: 5 }, () => deferred<unknown>());
    const errors: string[] = [];
    const round = new Round(nodes(5), 3, false, 10_000, accept, (node, err) => errors.push(`${node.label} ${err.message}`));
    replies.forEach((d, i) => feed(round, i, d.promise));
    replies[0]!.resolve('no');
    replies[1]!.reject(new Error('ECONNREFUSED'));
    replies[3]!.resolve('no');
    const t0 = performance.now();
    await round.done;
    expect(performance.now() - t0).toBeLessThan(100);
    expect(round.votes.map((v) => v.reason)).toEqual(['contended', 'error', 'pending', 'contended', 'pending']);
    expect(round.votes[1]!.detail).toBe('ECONNREFUSED');
    expect(errors).toEqual(['h:1 ECONNREFUSED']);
  });

  it('at the deadline the silent vote `timeout`, and their nodes hear how long they were waited for', async () => {
    const stalled: string[] = [];
    const round = new Round(nodes(3, stalled), 2, false, 30, accept, () => undefined);
    feed(round, 0, Promise.resolve('yes'));
    feed(round, 1, new Promise(() => undefined));
    feed(round, 2, new Promise(() => undefined));
    const t0 = performance.now();
    await round.done;
    expect(performance.now() - t0).toBeGreaterThanOrEqual(25);
    expect(round.timedOut).toBe(true);
    expect(round.votes.map((v) => v.reason)).toEqual(['ok', 'timeout', 'timeout']);
    expect(stalled).toEqual(['h:1 30', 'h:2 30']);
  });

  it('waitAll rounds (release) wait for everyone, even past a quorum either way', async () => {
    const replies = Array.from({ length: 3 }, () => deferred<unknown>());
    const round = new Round(nodes(3), 3, true, 10_000, accept, () => undefined);
    replies.forEach((d, i) => feed(round, i, d.promise));
    replies[0]!.resolve('no');
    replies[1]!.resolve('yes');
    // absence: 5 ms in which the round must not decide
    await new Promise((r) => setTimeout(r, 5));
    expect(round.decided).toBe(false);
    replies[2]!.resolve('no');
    await round.done;
    expect(round.votes.map((v) => v.reason)).toEqual(['contended', 'ok', 'contended']);
  });

  it('skipped nodes vote `not-asked` and count against', async () => {
    const round = new Round(nodes(5), 3, false, 10_000, accept, () => undefined);
    round.skip(3);
    round.skip(4);
    expect(round.decided).toBe(false);
    for (const i of [0, 1, 2]) feed(round, i, Promise.resolve('yes'));
    await round.done;
    expect(round.votes.map((v) => v.reason)).toEqual(['ok', 'ok', 'ok', 'not-asked', 'not-asked']);
  });
});

describe('ScriptCall: RESP built once', () => {
  it('encodes EVALSHA and EVAL with byte lengths (not string lengths)', () => {
    const call = new ScriptCall(RELEASE_SCRIPT, 2, ['k:é', 'm:é', 'tok', 'chan', 'é']);
    const text = call.evalshaPayload().toString('utf8');
    expect(text.startsWith(`*8\r\n$7\r\nEVALSHA\r\n$40\r\n${RELEASE_SCRIPT.sha}\r\n$1\r\n2\r\n$4\r\nk:é\r\n`)).toBe(true);
    expect(text.endsWith('$4\r\nchan\r\n$2\r\né\r\n')).toBe(true);
    expect(call.evalshaPayload()).toBe(call.evalshaPayload());
    const fallback = call.evalPayload().toString('utf8');
    expect(
      fallback.startsWith(`*8\r\n$4\r\nEVAL\r\n$${Buffer.byteLength(RELEASE_SCRIPT.source)}\r\n${RELEASE_SCRIPT.source}\r\n$1\r\n2\r\n`),
    ).toBe(true);
  });
});
