import type { Speed } from '../api/scenarios';

/** Pause between two steps at 1× (scaled by speed), so a viewer can read the narration (the default of REDLOCK_SCENARIO_READING_MS). */
export const READING_MS = 1_100;

export class Cancelled extends Error {
  override readonly name = 'AbortError';
}

/**
 * The flow control of a run: play/pause/step, speed, cancellation, and "something changed" wake-ups
 * for whoever waits on them (a paused boundary, a prediction). Framework-free.
 */
export class RunFlow {
  mode: 'play' | 'paused' = 'play';
  readonly abort = new AbortController();
  private stepCredits = 0;
  private waiters: Array<() => void> = [];

  /** `readingMs`: the pause between two steps at 1× (READING_MS unless configured). */
  constructor(
    public speed: Speed,
    private readonly readingMs: number = READING_MS,
  ) {}

  get signal(): AbortSignal {
    return this.abort.signal;
  }

  play(): void {
    this.mode = 'play';
    this.changed();
  }

  pause(): void {
    this.mode = 'paused';
    this.changed();
  }

  /** Paused: let the next step (and the steps chained to it) run. Playing: pause after the current one. */
  step(): void {
    if (this.mode === 'play') this.mode = 'paused';
    else this.stepCredits = 1;
    this.changed();
  }

  setSpeed(speed: Speed): void {
    this.speed = speed;
    this.changed();
  }

  cancel(reason: string): void {
    if (this.abort.signal.aborted) return;
    this.abort.abort(new Cancelled(reason));
    this.changed();
  }

  /** Between two steps: a reading pause when playing, a stop when paused (until play or step). */
  async boundary(first: boolean, onPaused: () => void): Promise<void> {
    if (!first && this.mode === 'play') {
      const until = performance.now() + this.readingMs / this.speed;
      while (this.mode === 'play' && performance.now() < until) {
        await Promise.race([this.sleep(until - performance.now()), this.nextChange()]);
      }
    }
    while (this.mode === 'paused') {
      if (this.stepCredits > 0) {
        this.stepCredits = 0;
        break;
      }
      onPaused();
      await this.nextChange();
      this.throwIfAborted();
    }
  }

  /** Wake everyone waiting for a change. */
  changed(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  nextChange(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  throwIfAborted(): void {
    if (this.abort.signal.aborted) throw this.abort.signal.reason;
  }

  /** Sleep `ms` of real time; rejects when the run is cancelled. */
  sleep(ms: number): Promise<void> {
    const signal = this.abort.signal;
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal.reason);
      };
      const timer = setTimeout(
        () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        },
        Math.max(0, ms),
      );
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}
