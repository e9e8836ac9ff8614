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
  /** A new lease end (an extension), or 0: with no `released`, the whole grant was released. */
  until: number;
  at: number;
  /**
   * A release of some of the grant's resources (a multi-resource lock's subset, some of a permit's
   * slots): their names, every such release of the token here so far. The granting console gives
   * back those it still counts (a name given back once is gone from its grant: read again, nothing).
   */
  released?: string[];
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

interface Grant {
  until: number;
  /** Holds counted now. */
  n: number;
  /** Holds at the grant, and the names it was granted over (null: not known, only a count). */
  n0: number;
  names: Set<string> | null;
  total: number;
}

/** The most resource names a foreign partial release carries (a grant has at most a few hundred). */
const FOREIGN_NAMES_MAX = 512;

interface KeyState {
  quota: KeyQuota;
  /** Grants still counted: token → lease end (ms), how many holds, and the resource names still held. */
  grants: Map<string, Grant>;
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

  /**
   * A grant of `holds` holds (a lock's resources, a permit's slots; a read-write lock counts one)
   * over `names` (its resources or slot names), counted until its lease ends or it is released.
   */
  granted(key: string, token: string, holds: number, until: number, names?: readonly string[]): void {
    const s = this.state(key, Date.now());
    if (s.grants.has(token)) return;
    const set = names ? new Set(names) : null;
    s.grants.set(token, { until, n: holds, n0: holds, names: set, total: set?.size ?? holds });
    s.held += holds;
    this.owners.set(token, key);
    this.byDigest.set(tokenDigest(token), token);
    this.onChange();
  }

  extended(token: string, until: number): void {
    const grant = this.grantOf(token);
    if (grant) grant.until = until;
    else this.noteForeign(token, { until });
  }

  /** Releases and extensions (by another console) of the grants this one counts, as the others reported them. */
  applyForeign(changes: Iterable<ForeignChange>): void {
    for (const c of changes) {
      const token = this.byDigest.get(c.token);
      if (token === undefined) continue;
      if (c.released) this.released(token, c.released);
      else if (c.until === 0) this.released(token);
      const grant = c.until > 0 ? this.grantOf(token) : undefined;
      if (grant && c.until > grant.until) grant.until = c.until;
    }
  }

  /** What this process did to other consoles' grants lately (FOREIGN_KEEP_MS). */
  foreignChanges(now = Date.now()): ForeignChange[] {
    for (const [digest, c] of this.foreign) if (now - c.at > FOREIGN_KEEP_MS) this.foreign.delete(digest);
    return [...this.foreign.values()];
  }

  /**
   * Note a change here to a grant another console counts: an extension (`until`), the whole grant
   * released (`until` 0 and no names), or some of its resources released (`names`, added to those
   * noted before; a later extension keeps them).
   */
  private noteForeign(token: string, change: { until: number; names?: readonly string[] }): void {
    const digest = tokenDigest(token);
    const before = this.foreign.get(digest);
    const at = Date.now();
    let next: ForeignChange;
    if ((before?.until === 0 && before.released === undefined) || (change.until === 0 && change.names === undefined)) {
      next = { token: digest, until: 0, at }; // the whole grant released (then nothing more to say)
    } else {
      const names = [...new Set([...(before?.released ?? []), ...(change.names ?? [])])].slice(0, FOREIGN_NAMES_MAX);
      // A partial release keeps the last extension noted; an extension keeps the names released.
      next = {
        token: digest,
        until: change.names ? (before?.until ?? 0) : change.until,
        at,
        ...(names.length > 0 ? { released: names } : {}),
      };
    }
    this.foreign.delete(digest);
    if (this.foreign.size >= FOREIGN_MAX) this.foreign.delete(this.foreign.keys().next().value!);
    this.foreign.set(digest, next);
    this.onChange();
  }

  /**
   * A release or a force-release of `token`: its room comes back now, all of it, or, when `names`
   * says which of its resources (slots) were released, the share of the holds they were: a name
   * the grant does not hold (never, or given back before) gives nothing back, and a grant counted
   * as one hold over several names (a read-write lock's writer) keeps it until its last name goes.
   */
  released(token: string, names?: readonly string[]): void {
    const key = this.owners.get(token);
    const s = key === undefined ? undefined : this.keys.get(key);
    const grant = s?.grants.get(token);
    if (!s || !grant) {
      if (key === undefined) this.noteForeign(token, { until: 0, names });
      return;
    }
    let keep = 0;
    if (names !== undefined) {
      if (grant.names) {
        let gone = 0;
        for (const name of new Set(names)) if (grant.names.delete(name)) gone++;
        if (gone === 0) return;
        keep = Math.ceil((grant.n0 * grant.names.size) / grant.total);
      } else keep = Math.max(0, grant.n - new Set(names).size);
    }
    s.held -= grant.n - keep;
    grant.n = keep;
    if (keep === 0) {
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
