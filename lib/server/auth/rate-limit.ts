/**
 * Failed-login limiter: at most `limit` failures per key in a sliding `windowMs`; a success clears
 * the key. In memory: the floor of auth/login-throttle.ts (whose state lives on the masters) that
 * still holds in this process when no master answers. `take` counts an attempt before its password
 * is checked, in the same synchronous step as the check (nothing can slip in between); `refund`
 * gives back an attempt that was not checked after all.
 */
export class LoginLimiter {
  private readonly failures = new Map<string, number[]>();

  constructor(
    private readonly limit = 5,
    private readonly windowMs = 60_000,
  ) {}

  /** Seconds to wait before another attempt is allowed, or 0. */
  retryAfter(key: string, now = Date.now()): number {
    const recent = this.recent(key, now);
    if (recent.length < this.limit) return 0;
    return Math.max(1, Math.ceil((recent[0]! + this.windowMs - now) / 1000));
  }

  /** Count an attempt now if the key is under its limit (0), else the seconds to wait (nothing counted). */
  take(key: string, now = Date.now()): number {
    const wait = this.retryAfter(key, now);
    if (wait === 0) this.fail(key, now);
    return wait;
  }

  /** Give back the newest attempt counted for `key` (it was not checked after all). */
  refund(key: string): void {
    const times = this.failures.get(key);
    times?.pop();
    if (times?.length === 0) this.failures.delete(key);
  }

  fail(key: string, now = Date.now()): void {
    const recent = this.recent(key, now);
    recent.push(now);
    this.failures.set(key, recent);
    if (this.failures.size > 10_000) this.sweep(now);
  }

  succeed(key: string): void {
    this.failures.delete(key);
  }

  private recent(key: string, now: number): number[] {
    return (this.failures.get(key) ?? []).filter((t) => t > now - this.windowMs);
  }

  private sweep(now: number): void {
    for (const [key, times] of this.failures) if (!times.some((t) => t > now - this.windowMs)) this.failures.delete(key);
  }
}
