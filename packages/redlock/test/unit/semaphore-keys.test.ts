import { describe, expect, it } from 'vitest';
import {
  lockKey,
  lockKeyPrefix,
  resourceOf,
  rwIntentKey,
  rwIntentName,
  rwKeyOf,
  rwKeyPrefix,
  rwPattern,
  rwSlotKey,
  rwSlotName,
  semaphoreKeyPrefix,
  semaphorePattern,
  semaphoreSlotKey,
  semaphoreSlotName,
  semaphoreSlotOf,
} from '../../src';
import { Permit } from '../../src/permit';
import { limitMismatch, pickPreferring, pickSlots } from '../../src/semaphore-slots';
import { SlotClaims } from '../../src/slot-claims';

// Resource names are arbitrary strings: a semaphore's slot keys must never be a mutex's key, nor
// another semaphore's slot, whatever separators the names hold.
const NAMES = ['a', 'a:1', 'a:1:2', '1', ':', '::', 'a:', ':a', 'lock:x', 'sem:x', 'sem:a:1', 'x:10', 'x:1', '0', 'é:ü', '*?[]\\'];

describe('the semaphore key layout', () => {
  it('slot keys are distinct across (semaphore, slot) pairs, and each parses back to its pair', () => {
    const seen = new Map<string, string>();
    for (const name of NAMES) {
      for (const slot of [0, 1, 2, 10, 255]) {
        const key = semaphoreSlotKey('rl:', name, slot);
        const pair = JSON.stringify([name, slot]);
        expect(seen.get(key), `${key} for ${pair}`).toBeUndefined();
        seen.set(key, pair);
        expect(semaphoreSlotOf('rl:', key)).toEqual({ resource: name, slot });
        expect(key).toBe(`rl:${semaphoreSlotName(name, slot)}`);
      }
    }
  });

  it('no slot key is a lock key (of any resource name), and no lock key parses as a slot', () => {
    for (const name of NAMES) {
      for (const slot of [0, 3]) {
        const key = semaphoreSlotKey('rl:', name, slot);
        expect(key.startsWith(lockKeyPrefix('rl:'))).toBe(false);
        expect(resourceOf('rl:', key)).toBeNull();
        expect(key.startsWith(semaphoreKeyPrefix('rl:'))).toBe(true);
      }
      expect(semaphoreSlotOf('rl:', lockKey('rl:', name))).toBeNull();
      expect(semaphoreSlotOf('rl:', lockKey('rl:', `sem:${name}:0`))).toBeNull();
    }
    // Not slot keys: no slot index, an empty name, another prefix.
    for (const key of ['rl:sem:a', 'rl:sem::0', 'rl:sem:a:01', 'rl:sem:a:-1', 'rl:sem:a:1.5', 'other:sem:a:0']) {
      expect(semaphoreSlotOf('rl:', key), key).toBeNull();
    }
    expect(semaphorePattern('r*:')).toBe('r\\*:sem:*');
  });
});

describe('the read-write lock key layout', () => {
  it('slot and intent keys are distinct across (lock, slot | intent), each parses back, and none is a lock key or a semaphore slot', () => {
    const seen = new Map<string, string>();
    for (const name of [...NAMES, 'rw:x', 'x:intent', 'intent']) {
      for (const part of [0, 1, 10, 63, null]) {
        const key = part === null ? rwIntentKey('rl:', name) : rwSlotKey('rl:', name, part);
        const pair = JSON.stringify([name, part]);
        expect(seen.get(key), `${key} for ${pair}`).toBeUndefined();
        seen.set(key, pair);
        expect(rwKeyOf('rl:', key)).toEqual({ resource: name, slot: part });
        expect(key).toBe(`rl:${part === null ? rwIntentName(name) : rwSlotName(name, part)}`);
        expect(key.startsWith(rwKeyPrefix('rl:'))).toBe(true);
        // Neither a mutex's key nor a semaphore's slot, whatever the name.
        expect(resourceOf('rl:', key)).toBeNull();
        expect(semaphoreSlotOf('rl:', key)).toBeNull();
        expect(key.startsWith(semaphoreKeyPrefix('rl:'))).toBe(false);
      }
      // And no lock key or semaphore slot parses as a read-write lock's key.
      expect(rwKeyOf('rl:', lockKey('rl:', name))).toBeNull();
      expect(rwKeyOf('rl:', lockKey('rl:', `rw:${name}:0`))).toBeNull();
      expect(rwKeyOf('rl:', semaphoreSlotKey('rl:', name, 0))).toBeNull();
    }
    for (const key of ['rl:rw:a', 'rl:rw::0', 'rl:rw::intent', 'rl:rw:a:01', 'rl:rw:a:-1', 'rl:rw:a:Intent', 'other:rw:a:0']) {
      expect(rwKeyOf('rl:', key), key).toBeNull();
    }
    expect(rwPattern('r*:')).toBe('r\\*:rw:*');
  });
});

describe('choosing slots', () => {
  it('pickSlots takes distinct slots of those offered, ascending, each as likely', () => {
    const counts = [0, 0, 0, 0];
    for (let i = 0; i < 4_000; i++) {
      const slots = pickSlots([0, 1, 2, 3], 2);
      expect(slots).toHaveLength(2);
      expect(slots[0]!).toBeLessThan(slots[1]!);
      for (const s of slots) counts[s]!++;
    }
    for (const c of counts) expect(c).toBeGreaterThan(1_700);
    expect(pickSlots([5, 7], 2)).toEqual([5, 7]);
  });

  it('pickPreferring takes the slots to avoid only when the others are too few', () => {
    for (let i = 0; i < 200; i++) {
      expect(pickPreferring([0, 1, 2, 3], new Set([0, 2]), 2)).toEqual([1, 3]);
      const three = pickPreferring([0, 1, 2, 3], new Set([0, 2]), 3);
      expect(three).toHaveLength(3);
      expect(three).toEqual(expect.arrayContaining([1, 3]));
    }
    expect(pickPreferring([4], new Set([4]), 1)).toEqual([4]);
  });

  it('SlotClaims: slots asked for or held by a valid permit are busy until settled or released', () => {
    const claims = new SlotClaims();
    const permit = (slots: number[], validityMs: number) => ({ resource: 's', slots, validityMs }) as unknown as Permit;
    claims.claim('s', [1]);
    claims.claim('s', [1, 2]);
    expect([...claims.busy('s')].sort()).toEqual([1, 2]);
    expect(claims.busy('other').size).toBe(0);
    claims.settle('s', [1], null);
    expect([...claims.busy('s')].sort()).toEqual([1, 2]);
    const held = permit([1, 2], 1_000);
    claims.settle('s', [1, 2], held);
    expect([...claims.busy('s')].sort()).toEqual([1, 2]);
    claims.released(held);
    expect(claims.busy('s').size).toBe(0);
    // A permit whose validity ran out without a release frees its slots too.
    claims.claim('s', [0]);
    claims.settle('s', [0], permit([0], 0));
    expect(claims.busy('s').size).toBe(0);
  });

  it("limitMismatch reads a holder's recorded limit, and a held slot beyond the caller's limit", () => {
    const value = (limit?: string) => `tok ${JSON.stringify(limit === undefined ? { owner: 'x' } : { owner: 'x', limit })}`;
    expect(limitMismatch(null, 0, 3)).toBeNull();
    expect(limitMismatch(value('3'), 0, 3)).toBeNull();
    expect(limitMismatch(value('4'), 1, 3)).toBe(4);
    expect(limitMismatch(value(), 1, 3)).toBeNull();
    expect(limitMismatch('bare-token', 1, 3)).toBeNull();
    // Slot 3 exists only for a limit of 4 or more.
    expect(limitMismatch('bare-token', 3, 3)).toBe(4);
    expect(limitMismatch(value('5'), 3, 3)).toBe(5);
  });
});
