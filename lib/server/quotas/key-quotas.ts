import { API_KEY_QUOTA_NAMES } from '../../api/api-keys';
import { HttpError } from '../http/errors';
import type { KeyQuota, QuotaSettings } from './settings';

/** The quotas an API key can run into, as named in a 429's details and in the metrics. */
export const QUOTA_NAMES = API_KEY_QUOTA_NAMES;
export type QuotaName = (typeof QUOTA_NAMES)[number];

/** One key's use against its quota (the console's API-key card and the metrics). */
export interface KeyUsage {
  key: string;
  held: number;
  waiting: number;
  quota: KeyQuota;
  refused: Record<QuotaName, number>;
}

interface KeyState {
  quota: KeyQuota;
  /** Grants still counted: token → lease end (ms) and how many resources. */
  grants: Map<string, { until: number; n: number }>;
  /** Resources of the grants above (pruned lazily: a grant whose lease ended still counts until a check needs the room). */
  held: number;
  /** Resources of acquires admitted and not yet ended (so concurrent acquires cannot overshoot). */
  pending: number;
  waiting: number;
  tokens: number;
  refilledAt: number;
  refused: Record<QuotaName, number>;
}

/**
 * Per API key quotas of the lock service, in this console process (N console processes behind a
 * balancer each allow the quota: set it to the share of one). An acquire is admitted or refused
 * whole before it touches the masters, nothing spent on a refusal: 429, `Retry-After`, and
 * `details: { quota, limit }`.
 *
 * Locks held are counted from the grants this process made, by lease end: a client that never
 * releases gets its room back when the lease ends; a release or a force-release by token gives it
 * back at once, an extension moves the lease end. A grant made through another console process is
 * not counted here.
 */
export class KeyQuotas {
  private readonly keys = new Map<string, KeyState>();
  private readonly owners = new Map<string, string>();

  constructor(
    private readonly settings: QuotaSettings,
    private readonly onRefusal: (key: string, quota: QuotaName) => void = () => undefined,
  ) {}

  /**
   * Admit an acquire of `resources` resources by `key` (waiting when `waits`), or throw the 429.
   * The ticket's `end` must be called once the acquire has ended, granted or not (after
   * `granted` for a grant).
   */
  admit(key: string, resources: number, waits: boolean, now = Date.now()): { end: () => void } {
    const s = this.state(key, now);
    if (waits && s.waiting >= s.quota.waiting) throw this.refuse(key, s, 'waiting', s.quota.waiting, 1, 'acquires waiting at once');
    if (s.held + s.pending + resources > s.quota.held) this.prune(s, now);
    if (s.held + s.pending + resources > s.quota.held) {
      const soonest = Math.min(...[...s.grants.values()].map((g) => g.until), now + 1_000);
      throw this.refuse(key, s, 'locks-held', s.quota.held, Math.ceil((soonest - now) / 1000), 'locks held at once');
    }
    this.refill(s, now);
    if (s.tokens < 1)
      throw this.refuse(key, s, 'acquire-rate', s.quota.rate, Math.ceil((1 - s.tokens) / s.quota.rate), 'acquires a second');
    s.tokens -= 1;
    s.pending += resources;
    if (waits) s.waiting++;
    let ended = false;
    return {
      end: () => {
        if (ended) return;
        ended = true;
        s.pending -= resources;
        if (waits) s.waiting--;
      },
    };
  }

  granted(key: string, token: string, resources: number, until: number): void {
    const s = this.state(key, Date.now());
    if (s.grants.has(token)) return;
    s.grants.set(token, { until, n: resources });
    s.held += resources;
    this.owners.set(token, key);
  }

  extended(token: string, until: number): void {
    const grant = this.grantOf(token);
    if (grant) grant.until = until;
  }

  /** A release or a force-release of `token`: its room comes back now. */
  released(token: string): void {
    const key = this.owners.get(token);
    const s = key === undefined ? undefined : this.keys.get(key);
    const grant = s?.grants.get(token);
    if (!s || !grant) return;
    s.grants.delete(token);
    s.held -= grant.n;
    this.owners.delete(token);
  }

  usage(now = Date.now()): KeyUsage[] {
    return [...this.keys.entries()].map(([key, s]) => {
      this.prune(s, now);
      return { key, held: s.held, waiting: s.waiting, quota: s.quota, refused: { ...s.refused } };
    });
  }

  /** A key not used yet: nothing held, its quota. */
  idle(key: string): KeyUsage {
    return {
      key,
      held: 0,
      waiting: 0,
      quota: this.settings.byKey.get(key) ?? this.settings.fallback,
      refused: { 'locks-held': 0, 'acquire-rate': 0, waiting: 0 },
    };
  }

  private grantOf(token: string): { until: number; n: number } | undefined {
    const key = this.owners.get(token);
    return key === undefined ? undefined : this.keys.get(key)?.grants.get(token);
  }

  private state(key: string, now: number): KeyState {
    let s = this.keys.get(key);
    if (!s) {
      const quota = this.settings.byKey.get(key) ?? this.settings.fallback;
      s = {
        quota,
        grants: new Map(),
        held: 0,
        pending: 0,
        waiting: 0,
        tokens: quota.burst,
        refilledAt: now,
        refused: { 'locks-held': 0, 'acquire-rate': 0, waiting: 0 },
      };
      this.keys.set(key, s);
    }
    return s;
  }

  private prune(s: KeyState, now: number): void {
    for (const [token, grant] of s.grants) {
      if (grant.until > now) continue;
      s.grants.delete(token);
      s.held -= grant.n;
      this.owners.delete(token);
    }
  }

  private refill(s: KeyState, now: number): void {
    s.tokens = Math.min(s.quota.burst, s.tokens + ((now - s.refilledAt) / 1000) * s.quota.rate);
    s.refilledAt = now;
  }

  private refuse(key: string, s: KeyState, quota: QuotaName, limit: number, waitS: number, what: string): HttpError {
    s.refused[quota]++;
    this.onRefusal(key, quota);
    const retry = Math.max(1, waitS);
    return new HttpError(
      429,
      'TOO_MANY_REQUESTS',
      `this API key's quota of ${limit} ${what} is used up; try again in ${retry} s`,
      { quota, limit },
      { 'retry-after': String(retry) },
    );
  }
}
