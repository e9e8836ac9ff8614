import { describe, expect, it } from 'vitest';
import { rwIntentKey, rwSlotKey, semaphoreSlotKey } from '@redlock-console/redlock';
import type { LockCell } from '../../lib/inspect/quorum-view';
import { groupSlotLocks } from '../../lib/inspect/slot-locks';

/** The grouping of slot keys into semaphores and read-write locks (lib/inspect/slot-locks.ts), on readings made here. */
type Reading = Map<string, Omit<LockCell, 'node' | 'known' | 'present'>>;
const options = { configuredNodes: 3 };
const at = (token: string, meta: Record<string, string> | null = null) => ({ token, pttlMs: 10_000, meta });
/** The same keys on each of `nodes` of three (null: that node could not be read). */
function readings(keys: Record<string, ReturnType<typeof at>>, nodes: (0 | 1 | null)[] = [1, 1, 1]): (Reading | null)[] {
  return nodes.map((n) => (n === null ? null : new Map(n === 1 ? Object.entries(keys) : [])));
}

describe('slot locks from their keys', () => {
  it('a permit counts where its token is on a quorum: one node of three is no permit, two nodes and one unreadable is', () => {
    const keys = { [semaphoreSlotKey('rl:', 'q', 0)]: at('t0', { limit: '2' }) };
    expect(groupSlotLocks('semaphore', 'rl:', readings(keys, [1, 0, 0]), options)[0]).toMatchObject({ held: 0, unsettled: 1, limit: 2 });
    expect(groupSlotLocks('semaphore', 'rl:', readings(keys, [1, 1, null]), options)[0]).toMatchObject({ held: 1, unsettled: 0 });
  });

  it('a name holding ":" and a digit names one semaphore (the last ":" ends it); a read-write key is not a semaphore', () => {
    const keys = {
      [semaphoreSlotKey('rl:', 'a:1', 0)]: at('x'),
      [semaphoreSlotKey('rl:', 'a', 1)]: at('y'),
      [rwSlotKey('rl:', 'a', 0)]: at('z'),
    };
    const locks = groupSlotLocks('semaphore', 'rl:', readings(keys), options);
    expect(locks.map((l) => [l.resource, l.holders.map((h) => h.slots)])).toEqual([
      ['a', [[1]]],
      ['a:1', [[0]]],
    ]);
  });

  it('read-write roles: by the recorded mode, else one slot a reader and more the writer; the intent apart', () => {
    const keys = {
      [rwSlotKey('rl:', 'doc', 0)]: at('w'),
      [rwSlotKey('rl:', 'doc', 1)]: at('w'),
      [rwSlotKey('rl:', 'doc', 2)]: at('r', { rw: 'read' }),
      [rwIntentKey('rl:', 'doc')]: at('i', { rw: 'intent' }),
    };
    const [doc] = groupSlotLocks('rwlock', 'rl:', readings(keys), options);
    expect(doc).toMatchObject({ mode: 'write', held: 3, intent: { token: 'i', role: 'intent', slots: [] } });
    expect(doc!.holders.map((h) => [h.token, h.role, h.slots])).toEqual([
      ['w', 'writer', [0, 1]],
      ['r', 'reader', [2]],
    ]);
    expect(doc!.rows.map((r) => r.slot)).toEqual([0, 1, 2, null]);
  });
});
