import { describe, expect, it } from 'vitest';
import { analyzePhase } from '../../chaos/harness/analyze';
import { analyzeSlots, checkCapacity, checkRwExclusion } from '../../chaos/harness/check-slots';
import type { ClientEvent, LiveKey, RegisterRecord, SlotKind } from '../../chaos/harness/history';
import { indexSlotGrants } from '../../chaos/harness/slot-locks';
import { isSlotRegister, slotRegister } from '../../chaos/harness/slot-names';

const MS = 1_000_000;

interface GrantSpec {
  id: string;
  kind?: SlotKind;
  name?: string;
  limit?: number;
  slots: number[];
  /** acquire ok, ms */
  ok: number;
  /** validity end computed at the grant, ms */
  validUntil: number;
  /** release invoke, ms (none: never released) */
  release?: number;
  fence?: number | null;
  client?: number;
}

/** The events a slot loop would log for one grant (chaos/workers/slot-loop.ts). */
function grantEvents(s: GrantSpec): ClientEvent[] {
  const kind = s.kind ?? 'sem';
  const events: ClientEvent[] = [
    {
      e: 'slot-acquire-invoke',
      lock: s.id,
      client: s.client ?? 0,
      kind,
      name: s.name ?? (kind === 'sem' ? 's2' : 'w3'),
      limit: s.limit ?? (kind === 'sem' ? 2 : 3),
      permits: kind === 'sem' ? s.slots.length : 1,
      fenced: true,
      t: (s.ok - 1) * MS,
    },
    {
      e: 'acquire-ok',
      lock: s.id,
      t: s.ok * MS,
      validUntil: s.validUntil * MS,
      fence: s.fence ?? null,
      votes: 'fffff',
      validityAtReturnMs: s.validUntil - s.ok,
      slots: s.slots,
    },
  ];
  if (s.release !== undefined)
    events.push(
      { e: 'release-invoke', lock: s.id, t: s.release * MS },
      { e: 'release-ok', lock: s.id, t: (s.release + 1) * MS, votes: 'fffff' },
    );
  return events;
}

const grantsOf = (...specs: GrantSpec[]) => indexSlotGrants(specs.flatMap(grantEvents)).grants;
const analyze = (specs: GrantSpec[], register: RegisterRecord[] = [], liveKeys: LiveKey[] = []) =>
  analyzeSlots({ events: specs.flatMap(grantEvents), register, nemesis: [], leakedKeys: [], liveKeys }, 200);

describe('capacity: never more permits held than the limit', () => {
  it('finds a third holder of a 2-permit semaphore, whatever slots the core reported', () => {
    // Three holders on three different slots: no slot has two holders, only the count sees it.
    const r = checkCapacity(
      grantsOf(
        { id: 'a', slots: [0], ok: 0, validUntil: 100 },
        { id: 'b', slots: [1], ok: 10, validUntil: 100 },
        { id: 'c', slots: [2], ok: 20, validUntil: 100 },
      ),
    );
    expect(r.violations).toBe(1);
    expect(r.examples[0]).toMatch(/sem:s2 \(limit 2\): 3 permits held at once/);
  });

  it('counts a grant of two permits as two', () => {
    expect(
      checkCapacity(grantsOf({ id: 'a', slots: [0, 1], ok: 0, validUntil: 100 }, { id: 'b', slots: [1], ok: 10, validUntil: 100 }))
        .violations,
    ).toBe(1);
  });

  it('a holder counts until its release or its validity end, whichever is first', () => {
    const released = grantsOf(
      { id: 'a', slots: [0], ok: 0, validUntil: 100, release: 20 },
      { id: 'b', slots: [1], ok: 10, validUntil: 100 },
      { id: 'c', slots: [0], ok: 20, validUntil: 100 },
    );
    expect(checkCapacity(released).violations).toBe(0);
    // Paused past its validity, a holder releases late: its hold ended at its validity.
    const expired = grantsOf(
      { id: 'a', slots: [0], ok: 0, validUntil: 15, release: 500 },
      { id: 'b', slots: [1], ok: 10, validUntil: 100 },
      { id: 'c', slots: [0], ok: 20, validUntil: 100 },
    );
    expect(checkCapacity(expired).violations).toBe(0);
  });

  it('limits the readers of a read-write lock to maxReaders', () => {
    const readers = [0, 1, 2, 0].map((slot, i) => ({ id: `r${i}`, kind: 'read' as const, slots: [slot], ok: i, validUntil: 100 }));
    expect(checkCapacity(grantsOf(...readers.slice(0, 3))).violations).toBe(0);
    expect(checkCapacity(grantsOf(...readers)).violations).toBe(1);
  });
});

describe('rw-exclusion: never a writer with a reader or another writer', () => {
  const writer = { id: 'w', kind: 'write' as const, slots: [0, 1], ok: 50, validUntil: 150 };

  it('finds a writer beside a reader, in either order, and two writers', () => {
    // The reader holds a slot the writer did not take (a writer short of a slot): no slot overlaps.
    const reader = { id: 'r', kind: 'read' as const, slots: [2], ok: 0, validUntil: 100 };
    expect(checkRwExclusion(grantsOf(reader, writer)).violations).toBe(1);
    expect(checkRwExclusion(grantsOf({ ...reader, ok: 60, validUntil: 160 }, writer)).violations).toBe(1);
    expect(checkRwExclusion(grantsOf({ ...writer, id: 'w2', ok: 0, validUntil: 60 }, writer)).examples[0]).toMatch(/writer .* and writer/);
    const a = analyze([reader, writer]);
    expect(a.caughtBy).toEqual(['rw-exclusion']);
  });

  it('lets readers share, and a writer follow a reader that released', () => {
    const readers = grantsOf(
      { id: 'r1', kind: 'read', slots: [0], ok: 0, validUntil: 100, release: 40 },
      { id: 'r2', kind: 'read', slots: [1], ok: 10, validUntil: 100, release: 50 },
    );
    expect(checkRwExclusion(readers).violations).toBe(0);
    expect(checkRwExclusion([...readers, ...grantsOf(writer)]).violations).toBe(0);
  });
});

describe('per slot: overlap and fence order, not across slots', () => {
  it('a later grant of the same slot with a lower fence is a violation; of another slot it is not', () => {
    const first = { id: 'a', slots: [0], ok: 0, validUntil: 100, release: 10, fence: 20 };
    expect(analyze([first, { id: 'b', slots: [1], ok: 20, validUntil: 100, fence: 10 }]).violations).toBe(0);
    const a = analyze([first, { id: 'b', slots: [0], ok: 20, validUntil: 100, fence: 10 }]);
    expect(a.caughtBy).toEqual(['slot-fencing']);
    expect(a.fencing.examples[0]).toMatch(/sem:s2@0: b@0 got fence 10 after a@0 got 20/);
  });

  it("a writer's fence orders it against the readers of every slot", () => {
    const reader = { id: 'r', kind: 'read' as const, slots: [2], ok: 0, validUntil: 100, release: 10, fence: 30 };
    const a = analyze([reader, { id: 'w', kind: 'write', slots: [0, 1, 2], ok: 20, validUntil: 100, fence: 25 }]);
    expect(a.caughtBy).toEqual(['slot-fencing']);
  });

  it('two holders of one slot are a slot overlap (and over the limit when it is full)', () => {
    const a = analyze([
      { id: 'a', slots: [0], ok: 0, validUntil: 100 },
      { id: 'b', slots: [0], ok: 10, validUntil: 100 },
    ]);
    expect(a.caughtBy).toEqual(['slot-overlap']);
  });

  it("a slot's register is judged per slot, and not by the mutex's fencing checker", () => {
    const resource = slotRegister(true, 'sem', 's2', 0);
    expect(isSlotRegister(resource)).toBe(true);
    expect(isSlotRegister('f:r0')).toBe(false);
    const register: RegisterRecord[] = [
      { resource, lock: 'a@0', fence: 20, t: 1, accepted: true },
      { resource, lock: 'b@0', fence: 10, t: 2, accepted: true },
    ];
    const events = [{ id: 'a', slots: [0], ok: 0, validUntil: 100, release: 10, fence: 20 }].flatMap(grantEvents);
    const phase = analyzePhase({ events, register, nemesis: [], leakedKeys: [] }, { toleranceMs: 200, end: 200 * MS });
    expect(phase.fencing.registerViolations).toBe(0);
    expect(phase.slots.fencing.registerViolations).toBe(1);
    expect(phase.caughtBy).toEqual(['slot-fencing']);
    expect(phase.violations).toBe(1);
  });
});

describe('slot hygiene', () => {
  const value = (attempt: string) => `tok {"attempt":"${attempt}","limit":"2"}`;

  it("a released grant's own slot key left on a node that granted and released it is a leftover; an earlier attempt's on another slot is not", () => {
    const grant = { id: 'a', slots: [1], ok: 0, validUntil: 100, release: 10 };
    expect(analyze([grant], [], [{ node: 0, key: 'p:sem:s2:1', value: value('a') }]).hygiene.leftovers).toBe(1);
    expect(analyze([grant], [], [{ node: 0, key: 'p:sem:s2:0', value: value('a') }]).hygiene.leftovers).toBe(0);
  });

  it("a rejected acquire's key on a node outside its cleanupPending is a leftover, read at once or at quiescence; its intent key is not", () => {
    const refused = (pending: number[], leftovers: number[] = []): ClientEvent[] => [
      { e: 'slot-acquire-invoke', lock: 'x', client: 0, kind: 'write', name: 'w3', limit: 3, permits: 1, fenced: true, t: 0 },
      { e: 'acquire-fail', lock: 'x', t: MS, error: 'LockContendedError', leftovers, unread: 0, pending },
    ];
    const at = (events: ClientEvent[], live: LiveKey[]) =>
      analyzeSlots({ events, register: [], nemesis: [], leakedKeys: [], liveKeys: live }, 200).hygiene;
    expect(at(refused([], [2]), []).examples[0]).toMatch(
      /x on rw:w3 was rejected \(LockContendedError\) and left its key on node\(s\) 3, which answered it$/,
    );
    // Any slot of its object (its attempts asked for different ones), on a node it answered.
    const slotKey = { node: 3, key: 'p:rw:w3:1', value: value('x') };
    expect(at(refused([]), [slotKey]).examples[0]).toMatch(/node\(s\) 4, which answered it \(found at quiescence\)$/);
    expect(at(refused([3]), [slotKey]).leftovers).toBe(0);
    expect(at(refused([]), [{ ...slotKey, key: 'p:rw:w3:intent' }]).leftovers).toBe(0);
    expect(at(refused([]), [{ ...slotKey, key: 'p:sem:w3:1' }]).leftovers).toBe(0);
  });

  it('leaves the mutex checkers to the mutex events', () => {
    const events: ClientEvent[] = [
      ...grantEvents({ id: 'a', slots: [0], ok: 0, validUntil: 100 }),
      ...grantEvents({ id: 'b', slots: [1], ok: 10, validUntil: 100 }),
    ];
    const phase = analyzePhase({ events, register: [], nemesis: [], leakedKeys: [] }, { toleranceMs: 200, end: 200 * MS });
    expect(phase.acquisitions.successes).toBe(0);
    expect(phase.slots.grants).toEqual({ sem: 2, read: 0, write: 0 });
    expect(phase.violations).toBe(0);
  });
});
