import 'server-only';
import { unavailable } from '../http/errors';

/**
 * The end of this replica's drain (service.ts stop): acquires still waiting (`waitMs`) when
 * REDLOCK_DRAIN_MS runs out are stopped, and each is answered 503 UNAVAILABLE with `Retry-After`
 * rather than a connection reset, so that its client (or the balancer's next try) goes to another
 * replica. Stopping an acquire is aborting it: the core stops retrying, and a grant that lands anyway
 * is released by the core (acquire's abort contract), so a 503 from here never leaves a lock held
 * for nobody. One controller per process: the lock service loads lib/ once.
 */
const stopping = new AbortController();

export function replicaStopping(): AbortSignal {
  return stopping.signal;
}

export function stopWaitingAcquires(): void {
  stopping.abort(new Error('this lock-service replica is shutting down'));
}

/** The answer to an acquire stopped by the drain's end. */
export function stoppedByDrain() {
  return unavailable(
    'this lock-service replica is shutting down and stopped the acquire before it was granted; send it again (another replica answers it)',
  );
}
