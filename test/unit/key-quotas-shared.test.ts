import { describe, expect, it } from 'vitest';
import { KeyQuotas, tokenDigest } from '../../lib/server/quotas/key-quotas';
import { quotaSettings } from '../../lib/server/quotas/settings';

/**
 * The quota arithmetic two console processes share (key-quotas.ts; the exchange over the masters
 * is quotas/shared-usage.ts, tested with two real processes in replicas-state.test.ts): what one
 * reports, the other counts against the same quota.
 */
const NONE = { 'locks-held': 0, 'acquire-rate': 0, waiting: 0 };

describe('KeyQuotas shared between processes', () => {
  it("counts the other processes' locks held and acquires waiting against the quota", () => {
    const q = new KeyQuotas(quotaSettings('k:held=3,waiting=1'));
    q.shareWith(new Map([['k', { held: 2, waiting: 1, refused: NONE }]]), new Map());
    expect(() => q.admit('k', 2, false)).toThrow(/3 locks held/);
    expect(() => q.admit('k', 1, true)).toThrow(/1 acquires waiting/);
    q.admit('k', 1, false).end();
    expect(q.usage(Date.now(), 'shared')[0]).toMatchObject({ key: 'k', held: 2, waiting: 1 });
    expect(q.usage(Date.now(), 'process')[0]).toMatchObject({ key: 'k', held: 0, waiting: 0 });
  });

  it("takes the acquires the others admitted from this process's bucket", () => {
    const q = new KeyQuotas(quotaSettings('k:rate=1,burst=3'));
    q.admit('k', 1, false, 0).end();
    q.shareWith(new Map(), new Map([['k', 2]]), 0);
    expect(() => q.admit('k', 1, false, 0)).toThrow(/1 acquires a second/);
  });

  it('reports what it holds, and gives the room back when another process released or extended its grant', () => {
    const a = new KeyQuotas(quotaSettings('k:held=5'));
    const b = new KeyQuotas(quotaSettings('k:held=5'));
    const now = Date.now();
    a.admit('k', 2, false).end();
    a.granted('k', 'tok-1', 2, now + 10_000);
    expect(a.report(now).k).toMatchObject({ held: 2, heldUntil: now + 10_000, admitted: 1 });
    // Extended, then released, through B (which never granted it): reported by digest, applied by A.
    b.extended('tok-1', now + 20_000);
    a.applyForeign(b.foreignChanges());
    expect(a.report(now).k!.heldUntil).toBe(now + 20_000);
    b.released('tok-1');
    expect(b.foreignChanges().map((c) => c.token)).toEqual([tokenDigest('tok-1')]);
    expect(JSON.stringify(b.foreignChanges())).not.toContain('tok-1');
    a.applyForeign(b.foreignChanges());
    expect(a.report(now).k!.held).toBe(0);
  });

  it("a release of some of a grant's resources through another process gives back those only, once, however often it is read", () => {
    const a = new KeyQuotas(quotaSettings('k:held=5'));
    const b = new KeyQuotas(quotaSettings('k:held=5'));
    const now = Date.now();
    a.admit('k', 3, false).end();
    a.granted('k', 'tok-3', 3, now + 10_000, ['s:0', 's:1', 's:2']);
    // One slot of the three released through B, then another: B's report names both.
    b.released('tok-3', ['s:0']);
    a.applyForeign(b.foreignChanges());
    a.applyForeign(b.foreignChanges()); // read again at the next sync: nothing more comes back
    expect(a.report(now).k!.held).toBe(2);
    // An extension through B in between keeps the names it released.
    b.extended('tok-3', now + 20_000);
    b.released('tok-3', ['s:1', 'never-held']);
    expect(b.foreignChanges()).toMatchObject([
      { token: tokenDigest('tok-3'), until: now + 20_000, released: ['s:0', 's:1', 'never-held'] },
    ]);
    a.applyForeign(b.foreignChanges());
    expect(a.report(now).k!).toMatchObject({ held: 1, heldUntil: now + 20_000 });
    // The report of those is dropped after a while (FOREIGN_KEEP_MS); a later partial release still counts.
    b.foreignChanges(Date.now() + 60_000);
    expect(b.foreignChanges(Date.now() + 60_000)).toEqual([]);
    b.released('tok-3', ['s:2']);
    a.applyForeign(b.foreignChanges());
    expect(a.report(now).k!.held).toBe(0);
  });

  it('a local release gives back only the names the grant still holds; a grant of one hold over many names keeps it to the last', () => {
    const q = new KeyQuotas(quotaSettings('k:held=3'));
    q.admit('k', 3, false).end();
    q.granted('k', 'tok', 3, Date.now() + 10_000, ['a', 'b', 'c']);
    q.released('tok', ['a', 'never', 'a']);
    expect(() => q.admit('k', 2, false)).toThrow(/3 locks held/);
    q.released('tok', ['a']); // given back before: nothing more
    expect(() => q.admit('k', 2, false)).toThrow(/3 locks held/);
    q.admit('k', 1, false).end();
    // A writer: one hold over three slots.
    const w = new KeyQuotas(quotaSettings('k:held=1'));
    w.admit('k', 1, false).end();
    w.granted('k', 'writer', 1, Date.now() + 10_000, ['rw:x:0', 'rw:x:1', 'rw:x:2']);
    w.released('writer', ['rw:x:0', 'rw:x:1']);
    expect(() => w.admit('k', 1, false)).toThrow(/1 locks held|1 lock held/);
    w.released('writer', ['rw:x:2']);
    w.admit('k', 1, false).end();
  });
});
