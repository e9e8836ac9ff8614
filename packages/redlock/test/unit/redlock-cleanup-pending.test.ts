import { describe, expect, it } from 'vitest';
import { LockContendedError, setCleanupPending } from '../../src/errors';
import { unansweredNodes } from '../../src/protocol';
import type { Vote, VoteReason } from '../../src/votes';

const votes = (...reasons: VoteReason[]): Vote[] =>
  reasons.map((reason, i) => ({ node: i + 1, label: `n${i + 1}`, vote: reason === 'ok' ? 'for' : 'against', reason }));
const nodes = (...readySince: number[]) => readySince.map((r) => ({ readySince: r }));

describe("cleanupPending: the nodes where a failed attempt's keys may remain", () => {
  it('names nodes by their number (from 1), as votes do', () => {
    const err = new LockContendedError('m', votes('ok', 'timeout', 'ok', 'error'), ['r']);
    setCleanupPending(err, [false, true, false, true]);
    expect(err.cleanupPending).toEqual([2, 4]);
    expect(err.cleanupPending.map((n) => err.votes[n - 1]!.reason)).toEqual(['timeout', 'error']);
  });

  it('nodes that answered the grant and the cleanup on one connection hold nothing', () => {
    expect(unansweredNodes(nodes(1, 1, 1), 10, votes('ok', 'contended', 'pending'), votes('ok', 'not-held', 'not-held'), null)).toBeNull();
  });

  it('names a node whose cleanup got no answer, whose grant failed, or whose grant was replayed after NOSCRIPT', () => {
    expect(unansweredNodes(nodes(1, 1, 1), 10, votes('ok', 'error', 'ok'), votes('timeout', 'not-held', 'ok'), null)).toEqual([
      true,
      true,
      false,
    ]);
    expect(unansweredNodes(nodes(1, 1, 1), 10, votes('ok', 'ok', 'ok'), votes('ok', 'ok', 'ok'), [false, false, true])).toEqual([
      false,
      false,
      true,
    ]);
  });

  it('names a node whose connection was replaced during the attempt, even when its grant answered (a client may re-send it)', () => {
    // Node 2's connection became ready at 12, after the attempt began at 10: its "for" may be the
    // answer of a re-sent grant while a copy is still on its way over the old connection.
    expect(unansweredNodes(nodes(1, 12, 1), 10, votes('ok', 'ok', 'contended'), votes('ok', 'ok', 'not-held'), null)).toEqual([
      false,
      true,
      false,
    ]);
  });
});
