import 'server-only';
import { unavailable } from '../http/errors';

/**
 * The end of this replica's drain (service.ts stop): acquires still waiting (`waitMs`) when
 * REDLOCK_DRAIN_MS runs out are stopped, and each is answered 503 UNAVAILABLE with `Retry-After`
 * rather than a connection reset, so that its client (or the balancer's next try) goes to another
 * replica. Stopping an acquire is aborting it: the core stops retrying, and a grant that lands anyway
 * is released by the core before the acquire settles (acquire's abort contract), so a 503 from here
 * never leaves a lock held for nobody, provided the process waits for the acquires to settle
 * (`settled`) before it closes the core's connections.
 *
 * Each acquire has a controller of its own, kept in a set only while it runs: no signal of the
 * process collects a listener per acquire (Node 20's AbortSignal.any on one long-lived signal kept
 * an entry per acquire ever answered, for the life of the process).
 */
const running = new Set<() => void>();
let stopping = false;
let emptied: (() => void) | null = null;

/** One acquire's wait: aborted when its client leaves (`gone`) or the drain ends, whichever first. */
export interface AcquireWait {
  signal: AbortSignal;
  /** Did the drain's end stop it (rather than its client leaving)? */
  stoppedByDrain(): boolean;
  /** The acquire ended: forget it. */
  done(): void;
}

export function acquireWait(gone: AbortSignal): AcquireWait {
  const controller = new AbortController();
  let byDrain = false;
  const onGone = () => controller.abort(gone.reason);
  const stop = () => {
    byDrain = !controller.signal.aborted;
    controller.abort(new Error('this lock-service replica is shutting down'));
  };
  if (gone.aborted) onGone();
  else gone.addEventListener('abort', onGone, { once: true });
  if (stopping) stop();
  else running.add(stop);
  return {
    signal: controller.signal,
    stoppedByDrain: () => byDrain,
    done() {
      gone.removeEventListener('abort', onGone);
      running.delete(stop);
      if (running.size === 0) emptied?.();
    },
  };
}

/** Stop every acquire running now, and those that start from now on. */
export function stopWaitingAcquires(): void {
  stopping = true;
  for (const stop of running) stop();
}

/** Resolves when no acquire runs (each stopped one has released what it took), or after `capMs`. */
export function acquiresSettled(capMs: number): Promise<void> {
  if (running.size === 0) return Promise.resolve();
  return new Promise<void>((done) => {
    const timer = setTimeout(done, capMs);
    timer.unref();
    emptied = () => {
      clearTimeout(timer);
      done();
    };
  });
}

/** How many acquires run now (tests: nothing is kept once they end). */
export function runningAcquires(): number {
  return running.size;
}

/** The answer to an acquire stopped by the drain's end. */
export function stoppedByDrain() {
  return unavailable(
    'this lock-service replica is shutting down and stopped the acquire before it was granted; send it again (another replica answers it)',
  );
}
