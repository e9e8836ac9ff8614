import { describe, expect, it } from 'vitest';
import { LOCK_KEYEVENTS } from '@/lib/server/events/keyspace-source';

/**
 * One node's keyevents as the lock core causes them (Redis 7 names; checked against real masters in
 * test/integration/events-keyspace-core.test.ts and the core's redlock-value-rewrites test), and
 * what the live events make of each operation's sequence: one event per operation, or none.
 */
describe('keyevents of a lock key on one node', () => {
  const reported = (sequence: string[]) => sequence.map((event) => LOCK_KEYEVENTS[event]).filter(Boolean);

  it.each([
    ['a fenced grant (SET NX PX, then the fence round’s SETRANGE)', ['set', 'expire', 'setrange'], ['lock.granted']],
    ['an extend that lengthens the lease (PEXPIRE GT, SETRANGE, empty APPEND)', ['expire', 'setrange', 'append'], ['lock.extended']],
    ['an extend that lengthens nothing (PEXPIRE GT refuses; SETRANGE only)', ['setrange'], []],
    ['a release', ['del'], ['lock.released']],
    ['an expiry', ['expired'], ['lock.expired']],
    ['an eviction, a rename, a clock-drift scenario’s shortening PEXPIRE', ['evicted', 'rename_from', 'expire'], []],
  ])('%s', (_what, sequence, events) => {
    expect(reported(sequence)).toEqual(events);
  });

  it('reads no event that both a grant and an extension cause', () => {
    const grant = new Set(['set', 'expire', 'setrange']);
    const extension = new Set(['expire', 'setrange', 'append']);
    for (const event of Object.keys(LOCK_KEYEVENTS)) expect(grant.has(event) && extension.has(event)).toBe(false);
  });
});
