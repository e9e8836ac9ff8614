import 'server-only';
import { tooMany } from './http/errors';

/**
 * Bounds on the lock list's expensive reads: a `pattern` read (a full SCAN of every master for an
 * arbitrary glob) and a `fresh` read (a new read that skips the shared snapshot). Four `fresh`
 * pattern reads by one viewer over 100,000 other keys per master took 27.5 s of scans, moved the
 * lock service's p95 from 52 ms to 3.3 s and grew the console to 1.08 GB: nothing bounded who
 * could start a scan, how many ran at once, or what one kept.
 *
 * - A read that joins a scan already running, or is answered from a snapshot still young enough,
 *   costs nothing here: only a read that starts a full scan spends its principal's budget.
 * - Each principal may start SCANS_PER_WINDOW full scans per WINDOW_MS (sliding); past that, 429
 *   with Retry-After. Principals are sessions' users and API keys: a viewer cannot spend an
 *   operator's budget.
 * - At most one full scan of a pattern runs in the console at a time; a request for another
 *   pattern meanwhile gets 429 (Retry-After 1). The live lock index (the default layout) is not a
 *   full scan and is not limited.
 * - A pattern scan keeps at most PATTERN_SCAN_MAX_KEYS keys per master (the node reads
 *   `truncated: true` past it), so one scan's memory is bounded whatever the masters hold.
 */
export const SCANS_PER_WINDOW = 6;
export const WINDOW_MS = 60_000;
export const PATTERN_SCAN_MAX_KEYS = 50_000;

export class ScanBudget {
  private readonly started = new Map<string, number[]>();
  private running: string | null = null;

  constructor(
    private readonly perWindow = SCANS_PER_WINDOW,
    private readonly windowMs = WINDOW_MS,
  ) {}

  /**
   * Take one full scan for `who` of `pattern` now, or throw a 429 HttpError (nothing spent).
   * `release` must be called when the scan ends, however it ends.
   */
  take(who: string, pattern: string, now = Date.now()): { release: () => void } {
    if (this.running !== null) {
      throw tooMany(`another full scan (pattern "${this.running}") is running; try again in 1 s`, 1);
    }
    const recent = (this.started.get(who) ?? []).filter((t) => t > now - this.windowMs);
    if (recent.length >= this.perWindow) {
      const wait = Math.max(1, Math.ceil((recent[0]! + this.windowMs - now) / 1000));
      throw tooMany(
        `at most ${this.perWindow} full scans (a pattern, or fresh=1) per ${this.windowMs / 1000} s for one user or key; try again in ${wait} s, or leave out fresh=1 to share the latest read`,
        wait,
      );
    }
    recent.push(now);
    this.started.set(who, recent);
    if (this.started.size > 10_000) this.sweep(now);
    this.running = pattern;
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        if (this.running === pattern) this.running = null;
      },
    };
  }

  private sweep(now: number): void {
    for (const [who, times] of this.started) if (!times.some((t) => t > now - this.windowMs)) this.started.delete(who);
  }
}
