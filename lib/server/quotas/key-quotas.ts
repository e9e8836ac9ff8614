import { createHash } from 'node:crypto';
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

/** What this process reports of one key to the other console processes (shared-usage.ts). */
export interface KeyReport {
  held: number;
  /** When the last of those grants' leases ends (ms): they count until then, reported or not. */
  heldUntil: number;
  waiting: number;
  /** Acquires admitted since this process started (the others take the difference from their buckets). */
  admitted: number;
  refused: Record<QuotaName, number>;
}

/**
 * A release (`until` 0) or an extension of a token this process did not grant (another console
 * did): reported, so that the console that counts the grant gives its room back or moves its end.
 * The token's digest only: the masters never see a token through this.
 */
export interface ForeignChange {
  token: string;
  until: number;
  at: number;
  /**
   * A release of some of the grant's resources (a multi-resource lock's subset, some of a permit's
   * slots): how many, counted over every such release of the token here (the granting console
   * gives back what it has not yet). Absent: the whole grant.
   */
  released?: number;
}

/** How long a foreign change is reported (the granting console reads it within a sync or two). */
const FOREIGN_KEEP_MS = 5_000;
const FOREIGN_MAX = 2_000;

/** The digest a token is known by between the consoles. */
export function tokenDigest(token: string): string {
  return createHash('sha256').update(token).digest('base64url').slice(0, 22);
}

/** The other processes' use of one key, as last read from the masters. */
export interface OthersUsage {
  held: number;
  waiting: number;
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
  admitted: number;
  refused: Record<QuotaName, number>;
}

const NO_REFUSALS = (): Record<QuotaName, number> => ({ 'locks-held': 0, 'acquire-rate': 0, waiting: 0 });
const NOBODY_ELSE: OthersUsage = Object.freeze({ held: 0, waiting: 0, refused: NO_REFUSALS() });

/**
 * Per API key quotas of the lock service, shared by the console processes on one set of masters.
 * An acquire is admitted or refused whole before it touches the masters, nothing spent on a
 * refusal: 429, `Retry-After`, and `details: { quota, limit }`.
 *
 * Locks held are counted from the grants this process made, by lease end: a client that never
 * releases gets its room back when the lease ends; a release or a force-release by token gives it
 * back at once, an extension moves the lease end. The other processes' use comes from the masters
 * (shared-usage.ts, `shareWith`): their locks held and acquires waiting count against the same
 * quota, and their admitted acquires are taken from this process's bucket, so the quota is the
 * sum's. The admission itself stays here, without a round trip per acquire: two processes can
 * overshoot by what each admits within one sync of the other (SYNC_MS), never more.
 */
export class KeyQuotas {
  private readonly keys = new Map<string, KeyState>();
  private readonly owners = new Map<string, string>();
  private others = new Map<string, OthersUsage>();
  /** Grants of this process by token digest (foreign changes name them so). */
  private readonly byDigest = new Map<string, string>();
  /** Releases and extensions done here of tokens granted elsewhere, by digest, for the report. */
  private readonly foreign = new Map<string, ForeignChange>();
  /** Partial releases reported by the others and given back here, by digest (a report is read again every sync). */
  private readonly foreignApplied = new Map<string, number>();
  /** Called when this process's use changed (the sync sends it soon). */
  onChange: () => void = () => undefined;

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
    const others = this.others.get(key) ?? NOBODY_ELSE;
    if (waits && s.waiting + others.waiting >= s.quota.waiting)
      throw this.refuse(key, s, 'waiting', s.quota.waiting, 1, 'acquires waiting at once');
    if (s.held + s.pending + others.held + resources > s.quota.held) this.prune(s, now);
    if (s.held + s.pending + others.held + resources > s.quota.held) {
      const soonest = Math.min(...[...s.grants.values()].map((g) => g.until), now + 1_000);
      throw this.refuse(key, s, 'locks-held', s.quota.held, Math.ceil((soonest - now) / 1000), 'locks held at once');
    }
    this.refill(s, now);
    if (s.tokens < 1)
      throw this.refuse(key, s, 'acquire-rate', s.quota.rate, Math.ceil((1 - s.tokens) / s.quota.rate), 'acquires a second');
    s.tokens -= 1;
    s.admitted++;
    s.pending += resources;
    if (waits) s.waiting++;
    this.onChange();
    let ended = false;
    return {
      end: () => {
        if (ended) return;
        ended = true;
        s.pending -= resources;
        if (waits) s.waiting--;
        this.onChange();
      },
    };
  }

  /**
   * The other processes' use, as just read from the masters: `others` by key, and how many
   * acquires each key had admitted elsewhere since the last reading (taken from this bucket).
   */
  shareWith(others: ReadonlyMap<string, OthersUsage>, admittedElsewhere: ReadonlyMap<string, number>, now = Date.now()): void {
    this.others = new Map(others);
    for (const [key, n] of admittedElsewhere) {
      if (n <= 0) continue;
      const s = this.state(key, now);
      this.refill(s, now);
      // Never below one burst's debt: a long-stale reading must not lock a key out for minutes.
      s.tokens = Math.max(-s.quota.burst, s.tokens - n);
    }
  }

  /** This process's own use of every key it has seen, for the other processes. */
  report(now = Date.now()): Record<string, KeyReport> {
    const out: Record<string, KeyReport> = {};
    for (const [key, s] of this.keys) {
      this.prune(s, now);
      let heldUntil = 0;
      for (const g of s.grants.values()) heldUntil = Math.max(heldUntil, g.until);
      out[key] = { held: s.held + s.pending, heldUntil, waiting: s.waiting, admitted: s.admitted, refused: { ...s.refused } };
    }
    return out;
  }

  granted(key: string, token: string, resources: number, until: number): void {
    const s = this.state(key, Date.now());
    if (s.grants.has(token)) return;
    s.grants.set(token, { until, n: resources });
    s.held += resources;
    this.owners.set(token, key);
    this.byDigest.set(tokenDigest(token), token);
    this.onChange();
  }

  extended(token: string, until: number): void {
    const grant = this.grantOf(token);
    if (grant) grant.until = until;
    else this.noteForeign(token, until);
  }

  /** Releases and extensions (by another console) of the grants this one counts, as the others reported them. */
  applyForeign(changes: Iterable<ForeignChange>): void {
    for (const c of changes) {
      const token = this.byDigest.get(c.token);
      if (token === undefined) continue;
      if (c.until === 0 && c.released === undefined) this.released(token);
      else if (c.until === 0) {
        // Cumulative: give back only what this report adds to the ones already applied.
        const more = c.released! - (this.foreignApplied.get(c.token) ?? 0);
        this.foreignApplied.set(c.token, c.released!);
        if (more > 0) this.released(token, more);
      } else {
        const grant = this.grantOf(token);
        if (grant && c.until > grant.until) grant.until = c.until;
      }
    }
  }

  /** What this process did to other consoles' grants lately (FOREIGN_KEEP_MS). */
  foreignChanges(now = Date.now()): ForeignChange[] {
    for (const [digest, c] of this.foreign) if (now - c.at > FOREIGN_KEEP_MS) this.foreign.delete(digest);
    return [...this.foreign.values()];
  }

  private noteForeign(token: string, until: number, released?: number): void {
    const digest = tokenDigest(token);
    const before = this.foreign.get(digest);
    this.foreign.delete(digest);
    if (this.foreign.size >= FOREIGN_MAX) this.foreign.delete(this.foreign.keys().next().value!);
    const change: ForeignChange = { token: digest, until, at: Date.now() };
    if (until === 0 && released !== undefined && !(before?.until === 0 && before.released === undefined))
      change.released = (before?.until === 0 ? (before.released ?? 0) : 0) + released;
    this.foreign.set(digest, change);
    this.onChange();
  }

  /**
   * A release or a force-release of `token`: its room comes back now, all of it, or `count`
   * resources of it when only some of the grant's resources (slots) were released.
   */
  released(token: string, count?: number): void {
    const key = this.owners.get(token);
    const s = key === undefined ? undefined : this.keys.get(key);
    const grant = s?.grants.get(token);
    if (!s || !grant) {
      if (key === undefined) this.noteForeign(token, 0, count);
      return;
    }
    const back = count === undefined ? grant.n : Math.min(count, grant.n);
    grant.n -= back;
    s.held -= back;
    if (grant.n <= 0) {
      s.grants.delete(token);
      this.owners.delete(token);
      this.byDigest.delete(tokenDigest(token));
    }
    this.onChange();
  }

  /**
   * Every key's use: this process's own (`scope: 'process'`, the metrics: each process reports its
   * own, summed by the dashboard), or with the other processes' added (`'shared'`, GET /api/api-keys).
   */
  usage(now = Date.now(), scope: 'process' | 'shared' = 'process'): KeyUsage[] {
    const names = scope === 'shared' ? new Set([...this.keys.keys(), ...this.others.keys()]) : new Set(this.keys.keys());
    return [...names].map((key) => {
      const s = this.keys.get(key);
      if (s) this.prune(s, now);
      const own = s ? { held: s.held, waiting: s.waiting, refused: s.refused } : { held: 0, waiting: 0, refused: NO_REFUSALS() };
      const o = scope === 'shared' ? (this.others.get(key) ?? NOBODY_ELSE) : NOBODY_ELSE;
      const refused = NO_REFUSALS();
      for (const q of QUOTA_NAMES) refused[q] = own.refused[q] + o.refused[q];
      return { key, held: own.held + o.held, waiting: own.waiting + o.waiting, quota: s?.quota ?? this.quotaOf(key), refused };
    });
  }

  private quotaOf(key: string): KeyQuota {
    return this.settings.byKey.get(key) ?? this.settings.fallback;
  }

  /** A key not used yet: nothing held, its quota. */
  idle(key: string): KeyUsage {
    return {
      key,
      held: 0,
      waiting: 0,
      quota: this.quotaOf(key),
      refused: NO_REFUSALS(),
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
        admitted: 0,
        refused: NO_REFUSALS(),
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
      this.byDigest.delete(tokenDigest(token));
    }
  }

  private refill(s: KeyState, now: number): void {
    s.tokens = Math.min(s.quota.burst, s.tokens + ((now - s.refilledAt) / 1000) * s.quota.rate);
    s.refilledAt = now;
  }

  private refuse(key: string, s: KeyState, quota: QuotaName, limit: number, waitS: number, what: string): HttpError {
    s.refused[quota]++;
    this.onChange();
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
