import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../lib/config/errors';
import { KeyQuotas } from '../../lib/server/quotas/key-quotas';
import { QUOTA_DEFAULTS, quotaSettings } from '../../lib/server/quotas/settings';

describe('REDLOCK_API_KEY_QUOTAS', () => {
  it('defaults, a changed default, a key of its own (burst follows its rate)', () => {
    expect(quotaSettings(undefined).fallback).toEqual(QUOTA_DEFAULTS);
    const s = quotaSettings(' *:held=500 ; billing:held=50,rate=20 ');
    expect(s.fallback).toEqual({ ...QUOTA_DEFAULTS, held: 500 });
    expect(s.byKey.get('billing')).toEqual({ held: 50, rate: 20, burst: 40, waiting: QUOTA_DEFAULTS.waiting });
  });

  it.each(['billing', 'billing:held', 'billing:held=0', 'billing:held=many', 'billing:cpu=1', 'a:held=1;a:rate=2', 'bad name:held=1'])(
    'refuses "%s" with one line naming the variable',
    (raw) => {
      expect(() => quotaSettings(raw)).toThrow(ConfigError);
      expect(() => quotaSettings(raw)).toThrow(/^REDLOCK_API_KEY_QUOTAS: /);
    },
  );
});

describe('KeyQuotas', () => {
  it('counts acquires in flight against locks held, so concurrent acquires cannot overshoot', () => {
    const q = new KeyQuotas(quotaSettings('k:held=2'));
    const a = q.admit('k', 1, false, 0);
    q.admit('k', 1, false, 0);
    expect(() => q.admit('k', 1, false, 0)).toThrow(/2 locks held/);
    q.granted('k', 't1', 1, 10_000);
    a.end();
    expect(() => q.admit('k', 1, false, 1)).toThrow(/2 locks held/); // still one grant + one in flight
  });

  it('a lease end, an extension and a release move the count', () => {
    const q = new KeyQuotas(quotaSettings('k:held=1'));
    q.admit('k', 1, false, 0).end();
    q.granted('k', 't1', 1, 1_000);
    expect(() => q.admit('k', 1, false, 500)).toThrow(/locks held/);
    q.extended('t1', 2_000);
    expect(() => q.admit('k', 1, false, 1_500)).toThrow(/try again in 1 s/);
    q.admit('k', 1, false, 2_001).end(); // the lease ended
    q.granted('k', 't2', 1, 10_000);
    q.released('t2');
    q.admit('k', 1, false, 2_002).end();
    expect(q.usage(2_003)[0]).toMatchObject({ key: 'k', held: 0, refused: { 'locks-held': 2 } });
  });
});
