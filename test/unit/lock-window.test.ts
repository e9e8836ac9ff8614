import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareKeys, mergeWindow, type MatrixRowData, type WindowRead } from '../../components/locks/window-merge';
import type { LockView } from '../../lib/api/locks';
import { encodeLockCursor } from '../../lib/client/lock-queries';
import { decodeCursor, encodeCursor } from '../../lib/inspect/page';

const view = (resource: string, tag = 'old'): LockView => ({
  resource,
  key: `rl:lock:${resource}`,
  cells: [],
  state: 'held',
  majorityToken: tag,
  holders: 5,
  tokens: 1,
  quorum: 3,
  validityMs: 1_000,
  fence: null,
  meta: null,
  noTtlNodes: [],
  overCeilingNodes: [],
  unknownNodes: [],
});
const sorted = (names: Iterable<string>) => [...new Set(names)].sort((a, b) => compareKeys(view(a), view(b)));

describe('encodeLockCursor (browser) matches the server cursor', () => {
  it('encodes like lib/inspect/page.ts and decodes back, for any resource and key', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' }), (resource, key) => {
        const cursor = encodeLockCursor({ resource, key });
        expect(cursor).toBe(encodeCursor({ resource, key }));
        const back = decodeCursor(cursor);
        expect(back).toEqual({ resource: Buffer.from(resource).toString(), key: Buffer.from(key).toString() });
      }),
    );
  });
});

describe('mergeWindow: a re-read window patched over loaded rows', () => {
  it('keeps rows outside the window, takes the window as truth inside it, stays sorted without duplicates', () => {
    const names = fc.uniqueArray(fc.stringMatching(/^[a-e]{1,3}$/), { maxLength: 30 });
    fc.assert(
      fc.property(names, names, fc.nat(), fc.nat({ max: 12 }), (loadedNames, nowNames, anchorPick, size) => {
        const loaded = sorted(loadedNames);
        const now = sorted(nowNames);
        const base: MatrixRowData[] = loaded.map((r) => ({ view: view(r), t0: 1 }));
        const anchorName =
          loaded.length && anchorPick % (loaded.length + 1) < loaded.length ? loaded[anchorPick % (loaded.length + 1)]! : null;
        const after = now.filter((r) => anchorName === null || r > anchorName);
        const items = after.slice(0, Math.max(1, size)).map((r) => view(r, 'new'));
        const win: WindowRead = {
          readAt: 5,
          receivedAt: 6,
          items,
          anchor: anchorName === null ? null : { resource: anchorName, key: `rl:lock:${anchorName}` },
          nextCursor: after.length > items.length ? 'more' : null,
        };
        const merged = mergeWindow(base, win).map((r) => r.view);
        const resources = merged.map((v) => v.resource);
        expect(resources).toEqual(sorted(resources));
        expect(new Set(resources).size).toBe(resources.length);
        const hi = win.nextCursor === null ? null : items[items.length - 1]!.resource;
        const inside = (r: string) => (anchorName === null || r > anchorName) && (hi === null || r <= hi);
        // Inside the window: exactly what the window read, all of it fresh.
        expect(merged.filter((v) => inside(v.resource))).toEqual(items);
        // Outside: exactly the loaded rows, untouched.
        expect(merged.filter((v) => !inside(v.resource)).map((v) => v.resource)).toEqual(loaded.filter((r) => !inside(r)));
        expect(
          mergeWindow(base, win)
            .filter((r) => r.view.majorityToken === 'new')
            .every((r) => r.t0 === 5),
        ).toBe(true);
      }),
    );
  });

  it('an empty window that reached the end clears everything after its anchor', () => {
    const base = ['a', 'b', 'c'].map((r) => ({ view: view(r), t0: 1 }));
    const merged = mergeWindow(base, {
      readAt: 1,
      receivedAt: 1,
      items: [],
      nextCursor: null,
      anchor: { resource: 'a', key: 'rl:lock:a' },
    });
    expect(merged.map((r) => r.view.resource)).toEqual(['a']);
  });
});
