import { describe, expect, it } from 'vitest';
import { analyzePhase, faultWindows } from '../../chaos/harness/analyze';
import { checkFencing } from '../../chaos/harness/check-fencing';
import { checkHygiene } from '../../chaos/harness/check-hygiene';
import { checkOverlap } from '../../chaos/harness/check-overlap';
import { encodeVotes, type ClientEvent, type NemesisEvent, type RegisterRecord } from '../../chaos/harness/history';
import { indexLocks } from '../../chaos/harness/locks';
import { decideWrite } from '../../chaos/harness/register-protocol';
import { quantile } from '../../chaos/harness/stats';

const MS = 1_000_000;

interface LockSpec {
  id: string;
  resource?: string;
  client?: number;
  /** acquire ok, ms */
  ok: number;
  /** validity end computed at the grant, ms */
  validUntil: number;
  /** release invoke, ms (none: never released) */
  release?: number;
  fence?: number | null;
  grantVotes?: string;
  releaseVotes?: string;
  validityAtReturnMs?: number;
  extendedUntil?: number;
}

/** The events a client process would log for one lock. */
function lockEvents(s: LockSpec): ClientEvent[] {
  const resource = s.resource ?? 'f:r0';
  const events: ClientEvent[] = [
    { e: 'acquire-invoke', lock: s.id, client: s.client ?? 0, resource, fenced: resource.startsWith('f:'), t: (s.ok - 1) * MS },
    {
      e: 'acquire-ok',
      lock: s.id,
      t: s.ok * MS,
      validUntil: s.validUntil * MS,
      fence: s.fence === undefined ? null : s.fence,
      votes: s.grantVotes ?? 'fffff',
      validityAtReturnMs: s.validityAtReturnMs ?? s.validUntil - s.ok,
    },
  ];
  if (s.extendedUntil !== undefined) {
    events.push(
      { e: 'extend-invoke', lock: s.id, t: (s.ok + 1) * MS },
      { e: 'extend-ok', lock: s.id, t: (s.ok + 2) * MS, validUntil: s.extendedUntil * MS },
    );
  }
  if (s.release !== undefined) {
    events.push(
      { e: 'release-invoke', lock: s.id, t: s.release * MS },
      { e: 'release-ok', lock: s.id, t: (s.release + 1) * MS, votes: s.releaseVotes ?? 'fffff' },
    );
  }
  return events;
}

const locksOf = (...specs: LockSpec[]) => indexLocks(specs.flatMap(lockEvents)).locks;
const write = (resource: string, lock: string, fence: number | null, t: number, accepted = true): RegisterRecord => ({
  resource,
  lock,
  fence,
  t: t * MS,
  accepted,
});

describe('checker 1: overlap of hold intervals', () => {
  it('finds two locks that hold one resource at once', () => {
    const result = checkOverlap(
      locksOf({ id: 'a', ok: 0, validUntil: 100, release: 50 }, { id: 'b', client: 1, ok: 40, validUntil: 140, release: 60 }).values(),
    );
    expect(result.overlaps).toBe(1);
    expect(result.examples[0]).toMatchObject({ resource: 'f:r0', first: 'a', second: 'b', overlapMs: 10 });
  });

  it('a hold ends at its validity end even if the release comes later (a paused holder), and touching ends do not overlap', () => {
    const locks = locksOf(
      { id: 'a', ok: 0, validUntil: 100, release: 900 },
      { id: 'b', client: 1, ok: 100, validUntil: 200, release: 150 },
      { id: 'c', client: 2, ok: 150, validUntil: 250, release: 240 },
    );
    expect(checkOverlap(locks.values()).overlaps).toBe(0);
  });

  it('an extension moves the validity end, and an overlap with the extended hold is found', () => {
    const locks = locksOf(
      { id: 'a', ok: 0, validUntil: 100, extendedUntil: 300 },
      { id: 'b', client: 1, ok: 200, validUntil: 300, release: 250 },
    );
    expect(checkOverlap(locks.values()).overlaps).toBe(1);
  });

  it('different resources never overlap; a grant with no validity holds nothing', () => {
    const locks = locksOf(
      { id: 'a', ok: 0, validUntil: 100, release: 90 },
      { id: 'b', resource: 'f:r1', ok: 10, validUntil: 100, release: 90 },
      { id: 'c', client: 1, ok: 50, validUntil: 40 },
    );
    expect(checkOverlap(locks.values()).overlaps).toBe(0);
  });

  it('counts every intersecting pair', () => {
    const locks = locksOf({ id: 'a', ok: 0, validUntil: 100 }, { id: 'b', ok: 10, validUntil: 100 }, { id: 'c', ok: 20, validUntil: 100 });
    expect(checkOverlap(locks.values()).overlaps).toBe(3);
  });
});

describe('checker 2: fencing', () => {
  it('a clean history passes: fences rise in grant order, the register accepts them in order', () => {
    const locks = locksOf(
      { id: 'a', ok: 0, validUntil: 100, release: 50, fence: 7 },
      { id: 'b', ok: 60, validUntil: 160, release: 90, fence: 9 },
    );
    const result = checkFencing(locks, [write('f:r0', 'a', 7, 1), write('f:r0', 'a', 7, 40), write('f:r0', 'b', 9, 61)]);
    expect(result).toMatchObject({
      grantOrderViolations: 0,
      registerViolations: 0,
      duplicateFences: 0,
      staleAcceptedFenced: 0,
      staleAcceptedUnfenced: 0,
    });
  });

  it('finds fences that do not increase in grant order', () => {
    const locks = locksOf(
      { id: 'a', ok: 0, validUntil: 100, release: 50, fence: 9 },
      { id: 'b', ok: 60, validUntil: 160, release: 90, fence: 9 },
      { id: 'c', ok: 100, validUntil: 200, release: 110, fence: 4 },
    );
    expect(checkFencing(locks, []).grantOrderViolations).toBe(2);
  });

  it('finds a register that accepted a lower fence, or the same fence from another lock', () => {
    const locks = locksOf(
      { id: 'a', ok: 0, validUntil: 100, release: 50, fence: 5 },
      { id: 'b', ok: 60, validUntil: 160, release: 90, fence: 6 },
      { id: 'c', ok: 100, validUntil: 200, release: 150, fence: 6 },
    );
    const result = checkFencing(locks, [write('f:r0', 'b', 6, 61), write('f:r0', 'a', 5, 70), write('f:r0', 'c', 6, 101)]);
    expect(result.registerViolations).toBe(1);
    expect(result.duplicateFences).toBe(1);
    expect(result.staleAcceptedFenced).toBe(1);
  });

  it('counts stale writes on the unfenced register (an old holder overwrote a newer one) and refused fenced writes', () => {
    const locks = locksOf(
      { id: 'a', resource: 'u:r0', ok: 0, validUntil: 100, release: 900 },
      { id: 'b', resource: 'u:r0', ok: 120, validUntil: 220, release: 150 },
      { id: 'c', ok: 0, validUntil: 100, release: 900, fence: 1 },
      { id: 'd', ok: 120, validUntil: 220, release: 150, fence: 2 },
    );
    const result = checkFencing(locks, [
      write('u:r0', 'a', null, 1),
      write('u:r0', 'b', null, 121),
      write('u:r0', 'a', null, 800),
      write('f:r0', 'c', 1, 1),
      write('f:r0', 'd', 2, 121),
      write('f:r0', 'c', 1, 800, false),
    ]);
    expect(result).toMatchObject({ staleAcceptedUnfenced: 1, staleAcceptedFenced: 0, rejectedFenced: 1, registerViolations: 0 });
  });
});

describe('checker 3: hygiene', () => {
  it('an extend accepted although invoked after the validity it extended had ended is a late extend; one invoked before it is not', () => {
    const extend = (id: string, invoke: number, validUntil: number): ClientEvent[] => [
      ...lockEvents({ id, ok: 0, validUntil, release: 300 }).slice(0, 2),
      { e: 'extend-invoke', lock: id, t: invoke * MS },
      { e: 'extend-ok', lock: id, t: (invoke + 1) * MS, validUntil: (invoke + 100) * MS },
    ];
    const late = indexLocks([...extend('late', 105, 100), ...extend('edge', 100.5, 100), ...extend('early', 95, 100)]).locks;
    const result = checkHygiene(late.values(), [], [], 50);
    // 5 ms after the end counts (the tolerance is 1 ms, not the grants' ttl/2); 0.5 ms and before do not.
    expect(result.lateExtends).toBe(1);
    expect(result.examples.join('\n')).toMatch(/late on f:r0 was extended by a call made 5\.0 ms after its validity ended/);
  });

  it('a rejected acquire whose key was read back on a node that answered it is a leftover; one with nothing left, or not read, is not', () => {
    const rejected = (id: string, leftovers?: number[]): ClientEvent[] => [
      { e: 'acquire-invoke', lock: id, client: 0, resource: 'f:r1', fenced: true, t: 0 },
      { e: 'acquire-fail', lock: id, t: 5 * MS, error: 'LockContendedError', ...(leftovers ? { leftovers, unread: 0 } : {}) },
    ];
    const { locks, failures } = indexLocks([...rejected('left', [3, 4]), ...rejected('clean', []), ...rejected('unread')]);
    const result = checkHygiene(locks.values(), [], [], 50, failures);
    expect(result.leftovers).toBe(1);
    expect(result.examples.join('\n')).toMatch(/left on f:r1 was rejected \(LockContendedError\) and left its key on node\(s\) 4,5/);
    // The phase's verdict counts it as a violation of the hygiene checker.
    const phase = analyzePhase(
      { events: rejected('left', [2]), register: [], nemesis: [], leakedKeys: [] },
      { toleranceMs: 50, end: 10 * MS },
    );
    expect(phase).toMatchObject({ violations: 1, caughtBy: ['hygiene'] });
  });

  it("keys read at quiescence: a released lock's on a node that answered its release, or a rejected acquire's outside its cleanupPending, are leftovers", () => {
    const value = (id: string) => `tok {"owner":"x","attempt":"${id}","ttlMs":"100"}`;
    // a: released; node 2 deleted it ('f'), node 5's release timed out ('t').
    const released = lockEvents({ id: 'a', ok: 0, validUntil: 100, release: 50, releaseVotes: 'fffft' });
    const rejected: ClientEvent[] = [
      { e: 'acquire-invoke', lock: 'r', client: 1, resource: 'f:r1', fenced: true, t: 0 },
      { e: 'acquire-fail', lock: 'r', t: 5 * MS, error: 'QuorumUnavailableError', leftovers: [], unread: 0, pending: [3] },
    ];
    const { locks, failures } = indexLocks([...released, ...rejected]);
    const live = (keys: Array<[number, string]>) => keys.map(([node, id]) => ({ node, key: `p:lock:${id}`, value: value(id) }));
    const check = (keys: Array<[number, string]>) => checkHygiene(locks.values(), [], [], 50, failures, live(keys));
    expect(
      check([
        [4, 'a'],
        [3, 'r'],
      ]).leftovers,
    ).toBe(0);
    const found = check([
      [1, 'a'],
      [0, 'r'],
    ]);
    expect(found.leftovers).toBe(2);
    expect(found.examples.join('\n')).toMatch(/a on f:r0 was released, yet its key was still on node\(s\) 2 at quiescence/);
    expect(found.examples.join('\n')).toMatch(
      /r on f:r1 was rejected \(QuorumUnavailableError\) and left its key on node\(s\) 1, which answered it \(found at quiescence\)/,
    );
  });

  it('a clean history passes', () => {
    const locks = locksOf(
      { id: 'a', ok: 0, validUntil: 100, release: 50 },
      { id: 'b', ok: 60, validUntil: 160, grantVotes: 'fffcc', releaseVotes: 'fffnn', release: 70 },
    );
    expect(checkHygiene(locks.values(), [], [], 50)).toMatchObject({ leakedKeys: 0, foreignDeletes: 0, expiredGrants: 0 });
  });

  it("a release that deleted a key on a node that had refused the SET deleted someone else's key", () => {
    const locks = locksOf({ id: 'a', ok: 0, validUntil: 100, grantVotes: 'fffcq', releaseVotes: 'ffffn', release: 50 });
    expect(checkHygiene(locks.values(), [], [], 50).foreignDeletes).toBe(1);
  });

  it("a key deleted on a node that voted quarantined was ours: the grant's SET NX runs before the quarantine check", () => {
    const locks = locksOf({ id: 'a', ok: 0, validUntil: 100, grantVotes: 'fffqq', releaseVotes: 'fffff', release: 50 });
    expect(checkHygiene(locks.values(), [], [], 50).foreignDeletes).toBe(0);
  });

  it('a key gone inside the validity was deleted by someone else, unless its node lost its data', () => {
    const locks = locksOf({ id: 'a', ok: 0, validUntil: 100, releaseVotes: 'fnfff', release: 50 });
    expect(checkHygiene(locks.values(), [], [], 50).foreignDeletes).toBe(1);
    const loss: NemesisEvent[] = [{ t: 20 * MS, kind: 'data-loss', node: 1 }];
    expect(checkHygiene(locks.values(), loss, [], 50).foreignDeletes).toBe(0);
    // After the validity a missing key is just expired.
    const late = locksOf({ id: 'b', ok: 0, validUntil: 100, releaseVotes: 'nnnnn', release: 150 });
    expect(checkHygiene(late.values(), [], [], 50).foreignDeletes).toBe(0);
  });

  it('a loss over a window (evictions under memory pressure) excuses a missing key only where the windows meet', () => {
    const locks = locksOf({ id: 'a', ok: 10, validUntil: 100, releaseVotes: 'fnfff', release: 50 });
    // The loss went on from 0 to 60 ms: it covers the lock's whole life, though no instant of it falls inside.
    expect(checkHygiene(locks.values(), [{ t: 60 * MS, since: 0, kind: 'data-loss', node: 1 }], [], 50).foreignDeletes).toBe(0);
    // Over before the lock was asked for, or on another node: the key was deleted by someone else.
    expect(checkHygiene(locks.values(), [{ t: 8 * MS, since: 0, kind: 'data-loss', node: 1 }], [], 50).foreignDeletes).toBe(1);
    expect(checkHygiene(locks.values(), [{ t: 60 * MS, since: 0, kind: 'data-loss', node: 2 }], [], 50).foreignDeletes).toBe(1);
  });

  it('finds locks returned with no validity left (beyond the scheduling tolerance) and leaked keys', () => {
    const locks = locksOf(
      { id: 'a', ok: 0, validUntil: 0, validityAtReturnMs: -300 },
      { id: 'b', ok: 10, validUntil: 10, validityAtReturnMs: -20 },
    );
    const result = checkHygiene(locks.values(), [], [{ node: 2, key: 'p:lock:x', pttlMs: -1 }], 100);
    expect(result).toMatchObject({ expiredGrants: 1, leakedKeys: 1, minValidityAtReturnMs: -300 });
  });

  it("judges validity in the client's own running time after the decision: a runner's stop after the core decided is not counted, one before it is", () => {
    // Acquire invoked at 0 ms, returned at 900 ms with −483 ms on the clock; client 0 stopped from 50 to 850 ms.
    const grant = (decided: number | undefined) => {
      const [, ok] = lockEvents({ id: 'a', ok: 900, validUntil: 900, validityAtReturnMs: -483 });
      const event = decided === undefined ? ok! : ({ ...ok!, decided: decided * MS } as ClientEvent);
      return indexLocks([{ e: 'acquire-invoke', lock: 'a', client: 0, resource: 'f:r0', fenced: true, t: 0 }, event]).locks;
    };
    const stop = (client: number): NemesisEvent[] => [
      { t: 50 * MS, kind: 'client-stop', client },
      { t: 850 * MS, kind: 'client-resume', client },
    ];
    // Decided at 40 ms, before the stop: the stop came between the decision and the return.
    expect(checkHygiene(grant(40).values(), stop(0), [], 50)).toMatchObject({ expiredGrants: 0, minValidityAtReturnMs: 317 });
    // Decided at 860 ms, after the stop: the core's clock ran through it, nothing is forgiven.
    expect(checkHygiene(grant(860).values(), stop(0), [], 50).expiredGrants).toBe(1);
    // Another client's stop, or no decision logged: nothing is forgiven.
    expect(checkHygiene(grant(40).values(), stop(1), [], 50).expiredGrants).toBe(1);
    expect(checkHygiene(grant(undefined).values(), stop(0), [], 50).expiredGrants).toBe(1);
  });
});

describe('analyzePhase', () => {
  it('sums the violations of the three checkers, names them, and counts acquisitions under fault', () => {
    const events = [
      ...lockEvents({ id: 'a', ok: 0, validUntil: 100, release: 50, fence: 1 }),
      ...lockEvents({ id: 'b', ok: 40, validUntil: 140, release: 90, fence: 2 }),
      { e: 'acquire-invoke', lock: 'c', client: 2, resource: 'f:r0', fenced: true, t: 0 } as const,
      { e: 'acquire-fail', lock: 'c', t: 5 * MS, error: 'LockContendedError' } as const,
    ];
    const nemesis: NemesisEvent[] = [
      { t: 30 * MS, kind: 'fault', what: 'x' },
      { t: 45 * MS, kind: 'heal', what: 'x' },
    ];
    const result = analyzePhase({ events, register: [], nemesis, leakedKeys: [] }, { toleranceMs: 50, end: 200 * MS });
    expect(result.violations).toBe(1);
    expect(result.caughtBy).toEqual(['overlap']);
    expect(result.acquisitions).toMatchObject({
      successes: 2,
      successesUnderFault: 1,
      failures: 1,
      failuresByClass: { LockContendedError: 1 },
    });
    const clean = analyzePhase(
      { events: lockEvents({ id: 'a', ok: 0, validUntil: 100, release: 50, fence: 1 }), register: [], nemesis: [], leakedKeys: [] },
      { toleranceMs: 50, end: 0 },
    );
    expect(clean.violations).toBe(0);
  });

  it('fault windows pair faults with heals; an unhealed fault runs to the end', () => {
    expect(
      faultWindows(
        [
          { t: 1, kind: 'fault', what: '' },
          { t: 2, kind: 'heal', what: '' },
          { t: 5, kind: 'fault', what: '' },
        ],
        9,
      ),
    ).toEqual([
      [1, 2],
      [5, 9],
    ]);
  });
});

describe('helpers', () => {
  it('votes encode as one character per node, the node-check reasons included', () => {
    const v = (reason: string, vote = 'against') => ({ vote, reason });
    expect(encodeVotes([v('ok', 'for'), v('contended'), v('quarantined'), v('unsafe-eviction'), v('ceiling-mismatch'), v('pending')])).toBe(
      'fcqump',
    );
  });

  it('the register accepts unfenced writes, and fenced ones only at or above the highest fence', () => {
    expect(decideWrite(false, null, 9)).toBe(true);
    expect(decideWrite(true, null, undefined)).toBe(false);
    expect(decideWrite(true, 3, undefined)).toBe(true);
    expect(decideWrite(true, 9, 9)).toBe(true);
    expect(decideWrite(true, 8, 9)).toBe(false);
  });

  it('quantile by nearest rank', () => {
    expect(quantile([], 0.5)).toBeNull();
    expect(quantile([5, 1, 3, 2, 4], 0.5)).toBe(3);
    expect(
      quantile(
        Array.from({ length: 100 }, (_, i) => i + 1),
        0.99,
      ),
    ).toBe(99);
  });
});
