import { ConfigError } from '../../config/errors';

/**
 * What one API key may do at once on the lock service (per console process; see key-quotas.ts).
 * - `held`: locks it holds at once (a grant counts until its lease ends or it is released);
 * - `rate`, `burst`: acquires a second, sustained and in a burst (a token bucket);
 * - `waiting`: acquires with `waitMs` waiting at once.
 */
export interface KeyQuota {
  held: number;
  rate: number;
  burst: number;
  waiting: number;
}

export interface QuotaSettings {
  /** Every key without a line of its own. */
  fallback: KeyQuota;
  /** By API key name. */
  byKey: ReadonlyMap<string, KeyQuota>;
}

/**
 * Generous enough for one busy service (the bench's 32 clients make ~2,000 pairs a second), and a
 * bound on what one key can put on the masters: the review's 7,808 locks in 20 s (+80 MB a master)
 * stop at 1,000.
 */
export const QUOTA_DEFAULTS: Readonly<KeyQuota> = Object.freeze({ held: 1_000, rate: 2_000, burst: 4_000, waiting: 200 });

const FIELDS = ['held', 'rate', 'burst', 'waiting'] as const;

/**
 * REDLOCK_API_KEY_QUOTAS: `;`-separated lines `<key name or *>:<field>=<n>,…` with fields held,
 * rate, burst, waiting; a field left out keeps the default (`*` changes the default), e.g.
 * `*:held=500;billing:held=50,rate=20,waiting=5`. `burst` defaults to twice `rate`. A bad line
 * stops the console's start with one line naming it.
 */
export function quotaSettings(raw: string | undefined): QuotaSettings {
  const lines = (raw ?? '')
    .split(';')
    .map((l) => l.trim())
    .filter(Boolean);
  const parsed = new Map<string, Partial<KeyQuota>>();
  for (const line of lines) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim();
    if (colon < 1 || !/^[\w.@*-]{1,128}$/.test(name)) throw bad(line, 'start with a key name (or *) and a colon');
    const quota: Partial<KeyQuota> = {};
    for (const pair of line.slice(colon + 1).split(',')) {
      const [field, value, extra] = pair.split('=').map((p) => p.trim());
      if (!FIELDS.includes(field as (typeof FIELDS)[number]) || extra !== undefined)
        throw bad(line, `use ${FIELDS.join(', ')} as field=number`);
      if (!/^\d{1,9}$/.test(value ?? '') || Number(value) < 1) throw bad(line, `${field} must be a whole number of 1 or more`);
      quota[field as (typeof FIELDS)[number]] = Number(value);
    }
    if (parsed.has(name)) throw bad(line, `${name} is named twice`);
    parsed.set(name, quota);
  }
  const fallback = complete(parsed.get('*') ?? {}, QUOTA_DEFAULTS);
  const byKey = new Map<string, KeyQuota>();
  for (const [name, quota] of parsed) if (name !== '*') byKey.set(name, complete(quota, fallback));
  return { fallback, byKey };
}

function complete(quota: Partial<KeyQuota>, base: KeyQuota): KeyQuota {
  const rate = quota.rate ?? base.rate;
  return {
    held: quota.held ?? base.held,
    rate,
    burst: quota.burst ?? (quota.rate !== undefined ? rate * 2 : base.burst),
    waiting: quota.waiting ?? base.waiting,
  };
}

function bad(line: string, why: string): ConfigError {
  return new ConfigError(`REDLOCK_API_KEY_QUOTAS: "${line}": ${why}`);
}
