import 'server-only';
import { runScript, script } from '../auth/redis-script';
import { consoleKeys } from '../console-keys';
import { processKey } from '../instance';
import { logger } from '../logger';
import { onEveryMaster, readMajority } from '../masters';
import { QUOTA_NAMES, type ForeignChange, type KeyQuotas, type KeyReport, type OthersUsage } from './key-quotas';

/** How often the processes exchange their use (and the least time between two exchanges a change asks for). */
export const SYNC_MS = 250;
export const SYNC_GAP_MS = 50;
/** A process's waiting acquires and admissions count while its report is younger than this (it may have stopped). */
export const REPORT_FRESH_MS = 3_000;
/** The hash lives this long after the last write (no console left: gone). */
const HASH_TTL_MS = 10 * 60_000;

interface Report {
  at: number;
  keys: Record<string, KeyReport>;
  /** Releases and extensions done by this process of grants another one made (key-quotas.ts ForeignChange). */
  foreign?: ForeignChange[];
}

/**
 * The API-key quotas shared by every console process on one set of masters. Each process writes
 * its own use (locks held and until when, acquires waiting, acquires admitted so far, refusals) to
 * one field of `<p>console:quota-usage` on every master, and reads the hash back from a majority
 * (per process, the newest report any master has): every SYNC_MS, and within SYNC_GAP_MS of a
 * change of its own. The admission stays local (key-quotas.ts), against its own use plus the
 * others' last reported.
 *
 * When the masters cannot be reached, the last reading stays: the others' locks held count until
 * their leases end (those locks may still be held, so the quota stays as strict as it was), their
 * waiting acquires and their rate once their reports are REPORT_FRESH_MS old (a process that
 * cannot be heard from may have stopped). The quota then opens to this process's own share at
 * most: not closed, because a lock needs the same majority of these masters to be granted at all,
 * so an acquire admitted while they are out of reach puts nothing on them (it fails with 503);
 * closing would answer 429 for a quota nobody can be using. Never an error to the client: a sync
 * that fails is logged (debug) and tried again.
 */
export class SharedUsage {
  private timer: ReturnType<typeof setInterval> | null = null;
  private running: Promise<void> | null = null;
  private soonTimer: ReturnType<typeof setTimeout> | null = null;
  private lastStart = 0;
  private lastRead = 0;
  /** Per other process and key, the admitted count last read (the next reading takes the difference). */
  private readonly admittedSeen = new Map<string, number>();

  constructor(
    private readonly quotas: KeyQuotas,
    private readonly self: string = processKey(),
  ) {}

  start(): void {
    if (this.timer) return;
    this.quotas.onChange = () => this.soon();
    this.timer = setInterval(() => void this.sync(), SYNC_MS);
    this.timer.unref();
    void this.sync();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    if (this.soonTimer) clearTimeout(this.soonTimer);
    this.timer = null;
    this.soonTimer = null;
    this.quotas.onChange = () => undefined;
  }

  /** Did the last reading come from the masters within REPORT_FRESH_MS? (GET /api/api-keys says which.) */
  get fresh(): boolean {
    return Date.now() - this.lastRead < REPORT_FRESH_MS;
  }

  /** One exchange that starts after this call, or its end after `timeoutMs` whatever happened. */
  async syncNow(timeoutMs = 1_000): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const after = (this.running ?? Promise.resolve()).then(() => this.sync());
    await Promise.race([after, new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]).finally(() =>
      clearTimeout(timer),
    );
  }

  private soon(): void {
    if (this.soonTimer) return;
    const wait = Math.max(0, this.lastStart + SYNC_GAP_MS - Date.now());
    this.soonTimer = setTimeout(() => {
      this.soonTimer = null;
      void this.sync();
    }, wait);
    this.soonTimer.unref();
  }

  private sync(): Promise<void> {
    if (this.running) return this.running;
    this.lastStart = Date.now();
    this.running = this.exchange()
      .catch((err: unknown) => logger().debug({ err: (err as Error).message }, 'API-key quota sync failed; trying again'))
      .finally(() => (this.running = null));
    return this.running;
  }

  private async exchange(): Promise<void> {
    const key = consoleKeys().quotaUsage;
    const now = Date.now();
    const mine = JSON.stringify({ at: now, keys: this.quotas.report(now), foreign: this.quotas.foreignChanges(now) } satisfies Report);
    await onEveryMaster((c) => runScript(c, WRITE, [key], [this.self, mine, String(HASH_TTL_MS)]));
    const { answers } = await readMajority((c) => c.hgetall(key));
    if (answers.length === 0) return;
    const newest = new Map<string, Report>();
    for (const hash of answers)
      for (const [instance, raw] of Object.entries(hash)) {
        if (instance === this.self) continue;
        const report = parseReport(raw);
        if (report && report.at > (newest.get(instance)?.at ?? -1)) newest.set(instance, report);
      }
    this.apply(newest, Date.now());
    this.lastRead = Date.now();
    const gone = [...newest].filter(([, r]) => isGone(r, this.lastRead)).map(([instance]) => instance);
    if (gone.length > 0) void onEveryMaster((c) => c.hdel(key, ...gone));
  }

  private apply(reports: ReadonlyMap<string, Report>, now: number): void {
    const others = new Map<string, OthersUsage>();
    const admittedElsewhere = new Map<string, number>();
    for (const [instance, report] of reports) {
      const fresh = now - report.at < REPORT_FRESH_MS;
      for (const [name, k] of Object.entries(report.keys)) {
        const o = others.get(name) ?? { held: 0, waiting: 0, refused: { 'locks-held': 0, 'acquire-rate': 0, waiting: 0 } };
        if (k.heldUntil > now || fresh) o.held += k.held;
        if (fresh) o.waiting += k.waiting;
        for (const q of QUOTA_NAMES) o.refused[q] += k.refused[q];
        others.set(name, o);
        const seenKey = `${instance}\0${name}`;
        const before = this.admittedSeen.get(seenKey);
        this.admittedSeen.set(seenKey, k.admitted);
        // First sight of a process: its past admissions are not this bucket's concern; a restart counts from zero.
        if (before !== undefined && fresh) {
          const delta = k.admitted >= before ? k.admitted - before : k.admitted;
          admittedElsewhere.set(name, (admittedElsewhere.get(name) ?? 0) + delta);
        }
      }
    }
    this.quotas.shareWith(others, admittedElsewhere, now);
    for (const report of reports.values()) this.quotas.applyForeign(report.foreign ?? []);
  }
}

/** A process not heard from in a while whose locks' leases have all ended: its field goes. */
function isGone(report: Report, now: number): boolean {
  return now - report.at > 10 * REPORT_FRESH_MS && Object.values(report.keys).every((k) => k.heldUntil <= now);
}

function parseReport(raw: string): Report | null {
  try {
    const r = JSON.parse(raw) as Report;
    if (typeof r.at !== 'number' || typeof r.keys !== 'object' || r.keys === null) return null;
    if (
      r.foreign !== undefined &&
      (!Array.isArray(r.foreign) ||
        !r.foreign.every(
          (f) =>
            typeof f.token === 'string' &&
            Number.isFinite(f.until) &&
            (f.released === undefined || (Array.isArray(f.released) && f.released.every((n) => typeof n === 'string'))),
        ))
    )
      return null;
    for (const k of Object.values(r.keys)) {
      if (![k.held, k.heldUntil, k.waiting, k.admitted].every(Number.isFinite)) return null;
      if (typeof k.refused !== 'object' || k.refused === null || !QUOTA_NAMES.every((q) => Number.isFinite(k.refused[q]))) return null;
    }
    return r;
  } catch {
    return null;
  }
}

/** KEYS[1] = the usage hash; ARGV = this process, its report, the hash's TTL (ms). */
const WRITE = script(`
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 0
`);
