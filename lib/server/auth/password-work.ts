/**
 * The console's budget for password work (scrypt, ~60 ms of CPU each, N=16384 r=8): how many run at
 * once, how many a second, how many wait, and for how long. Each login costs one scrypt, unknown
 * usernames too (by design: the time of a refusal must not tell which usernames exist), so without
 * a budget anyone can buy the console's CPU with logins. node:crypto's async scrypt runs on the
 * libuv threadpool (4 threads by default): four at once took both cores of a 2-core host and
 * starved the event loop the lock service answers on (measured with a console process
 * and a flood of ~6 logins/s: the lock service's acquire+release p50 went from 10 ms to 518 ms with
 * the default pool, 7,104 ms with UV_THREADPOOL_SIZE=16, and stayed at 11 ms with 1 — CPU, not the
 * pool's size, is what runs out). So:
 *
 * - at most `concurrency` scrypts at once (1: the other cores stay the lock service's and the masters');
 * - at most `perSecond` a second for browsers that are not trusted devices (4: about a quarter of
 *   one core), which is far more than people signing in need;
 * - at most `queue` attempts waiting, each at most `deadlineMs`: beyond either, the attempt is refused
 *   (HTTP 429 with Retry-After) without any scrypt;
 * - a browser this user signed in from before (a trusted device, auth/devices.ts) waits in a lane
 *   of its own that is served first and is not held to `perSecond`, so a flood of strangers cannot
 *   keep the operator out (it is limited per device: auth/login-throttle.ts).
 *
 * In memory, per process: scrypt's cost is this process's CPU. (The counts that limit guessing
 * live on the masters, shared by every console process: auth/login-throttle.ts.)
 */
export interface PasswordWorkLimits {
  readonly concurrency: number;
  readonly perSecond: number;
  readonly queue: number;
  readonly trustedQueue: number;
  readonly deadlineMs: number;
}
export const PASSWORD_WORK: PasswordWorkLimits = Object.freeze({
  concurrency: 1,
  perSecond: 4,
  queue: 8,
  trustedQueue: 8,
  deadlineMs: 2_000,
});

export type Lane = 'trusted' | 'other';

/** The attempt was refused before any password work: the budget is spent. */
export class PasswordWorkBusy extends Error {
  override readonly name = 'PasswordWorkBusy' as const;
  constructor(readonly retryAfterS: number) {
    super('the console is busy checking passwords');
  }
}

interface Waiter {
  start: () => void;
  timer: NodeJS.Timeout;
}

export class PasswordWork {
  private running = 0;
  private readonly lanes: Record<Lane, Waiter[]> = { trusted: [], other: [] };
  private refused = 0;
  private done = 0;
  /** The `other` lane's token bucket: `perSecond` tokens at most, refilled continuously. */
  private tokens: number;
  private refilledAt = Date.now();
  private wake: NodeJS.Timeout | null = null;

  constructor(readonly limits: PasswordWorkLimits = PASSWORD_WORK) {
    this.tokens = limits.perSecond;
  }

  /** Run `work` within the budget, or throw PasswordWorkBusy without running it. */
  async run<T>(lane: Lane, work: () => Promise<T>): Promise<T> {
    if (this.canStartNow(lane)) {
      if (lane === 'other') this.tokens--;
      this.running++;
    } else await this.wait(lane);
    try {
      return await work();
    } finally {
      this.done++;
      this.running--;
      this.next();
    }
  }

  /**
   * Would an attempt in `lane` be refused right now (its queue full)? Asked before the attempt is
   * counted on the masters, so a flood the budget refuses costs no round trip; `run` decides again.
   */
  full(lane: Lane): PasswordWorkBusy | null {
    const room = this.lanes[lane].length < (lane === 'trusted' ? this.limits.trustedQueue : this.limits.queue);
    if (room || this.canStartNow(lane)) return null;
    this.refused++;
    return new PasswordWorkBusy(this.retryAfterS());
  }

  /** What the budget has done so far (for tests and metrics). */
  stats(): { running: number; waiting: number; done: number; refused: number } {
    return { running: this.running, waiting: this.lanes.trusted.length + this.lanes.other.length, done: this.done, refused: this.refused };
  }

  private canStartNow(lane: Lane): boolean {
    if (this.running >= this.limits.concurrency || this.lanes.trusted.length + this.lanes.other.length > 0) return false;
    return lane === 'trusted' || this.refill() >= 1;
  }

  private refill(): number {
    const now = Date.now();
    this.tokens = Math.min(this.limits.perSecond, this.tokens + ((now - this.refilledAt) * this.limits.perSecond) / 1000);
    this.refilledAt = now;
    return this.tokens;
  }

  private wait(lane: Lane): Promise<void> {
    const queue = this.lanes[lane];
    if (queue.length >= (lane === 'trusted' ? this.limits.trustedQueue : this.limits.queue)) {
      this.refused++;
      return Promise.reject(new PasswordWorkBusy(this.retryAfterS()));
    }
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        start: () => {
          clearTimeout(waiter.timer);
          this.running++;
          resolve();
        },
        timer: setTimeout(() => {
          const i = queue.indexOf(waiter);
          if (i >= 0) queue.splice(i, 1);
          this.refused++;
          reject(new PasswordWorkBusy(this.retryAfterS()));
        }, this.limits.deadlineMs),
      };
      waiter.timer.unref?.();
      queue.push(waiter);
      this.next();
    });
  }

  private retryAfterS(): number {
    return Math.max(1, Math.ceil(this.limits.deadlineMs / 1000));
  }

  /** Start waiters while there is room: the trusted lane first; the other lane as its tokens allow (else wake when one is due). */
  private next(): void {
    while (this.running < this.limits.concurrency) {
      const trusted = this.lanes.trusted.shift();
      if (trusted) {
        trusted.start();
        continue;
      }
      if (this.lanes.other.length === 0) return;
      if (this.refill() < 1) {
        this.wake ??= setTimeout(
          () => {
            this.wake = null;
            this.next();
          },
          Math.ceil(((1 - this.tokens) * 1000) / this.limits.perSecond),
        );
        this.wake.unref?.();
        return;
      }
      this.tokens--;
      this.lanes.other.shift()!.start();
    }
  }
}
