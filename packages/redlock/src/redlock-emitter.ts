import { EventEmitter } from 'node:events';
import type { RedlockError } from './errors';
import type { OperationEvent, RedlockEvents } from './events';
import type { Vote } from './votes';

/** The events side of a Redlock: typed, listeners isolated from the lock core and each other. */
export class RedlockEmitter extends EventEmitter<RedlockEvents> {
  /**
   * Listeners are isolated: one that throws neither stops the others nor reaches the lock core
   * (a granted lock must not turn into a rejected acquire that leaves it held) nor becomes an
   * uncaughtException; it is reported with process.emitWarning instead.
   */
  override emit<K extends keyof RedlockEvents>(event: K, ...args: RedlockEvents[K]): boolean {
    const listeners = this.rawListeners(event as string);
    for (const listener of listeners) {
      try {
        (listener as (...a: unknown[]) => void).apply(this, args);
      } catch (err) {
        const error = err instanceof Error ? err : new Error(String(err));
        process.emitWarning(`a Redlock '${String(event)}' listener threw: ${error.message}`, {
          type: 'RedlockListenerError',
          detail: error.stack,
        });
      }
    }
    return listeners.length > 0;
  }

  /** Emit the outcome of an acquire, extend or release. */
  protected emitOutcome(
    op: 'acquire' | 'extend' | 'release',
    resources: readonly string[],
    ok: boolean,
    started: number,
    votes: readonly Vote[],
    fence: number | null,
    attempts: number,
    error?: RedlockError,
  ): void {
    const event: OperationEvent = {
      resources,
      ok,
      durationMs: performance.now() - started,
      votes,
      fence,
      attempts,
      ...(error ? { error } : {}),
    };
    this.emit(op, event);
  }
}
