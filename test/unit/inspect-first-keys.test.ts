import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareLocks, LockGrouper } from '@/lib/inspect';

describe('LockGrouper.firstKeys', () => {
  it('picks the first keys in view order, like sorting everything would', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.string({ maxLength: 6 }), fc.boolean(), fc.integer({ min: 0, max: 2 })), { maxLength: 200 }),
        fc.integer({ min: 1, max: 30 }),
        fc.string({ maxLength: 2 }),
        (entries, limit, prefix) => {
          const grouper = new LockGrouper(3, 'rl:lock:');
          for (const [resource, ours, node] of entries) grouper.add(node, ours ? `rl:lock:${resource}` : resource, 't', 1_000, null, false);
          const accept = (resource: string) => resource.startsWith(prefix);
          const all = new Map<string, { resource: string; key: string }>();
          for (const [resource, ours] of entries) {
            const key = ours ? `rl:lock:${resource}` : resource;
            if (accept(resource)) all.set(key, { resource, key });
          }
          const expected = [...all.values()].sort(compareLocks);
          const { keys, accepted } = grouper.firstKeys(limit, accept);
          expect(accepted).toBe(expected.length);
          expect(keys).toEqual(expected.slice(0, limit));
        },
      ),
    );
  });

  it('takes nothing for a limit below one', () => {
    const grouper = new LockGrouper(1, 'rl:lock:');
    grouper.add(0, 'rl:lock:a', 't', 1_000, null, false);
    expect(grouper.firstKeys(0, () => true)).toEqual({ keys: [], accepted: 0 });
  });
});
