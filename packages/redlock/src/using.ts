import { LockExpiredError } from './errors';
import type { Lock } from './lock';
import type { RedlockSettings } from './settings';

export interface UsingHost {
  readonly settings: Readonly<RedlockSettings>;
  /** Report a lock the routine can no longer rely on ('lock-lost'). */
  lockLost(lock: Lock, reason: Error): void;
}

/**
 * Run `routine` under `lock`: extend it before its validity runs low, abort the routine's signal
 * with the reason when an extension fails (or when maxExtensions is used up), and release the lock
 * at the end whatever happened. Resolves with the routine's result or rejects with its error.
 *
 * The extension is due when the remaining validity drops to the threshold:
 * min(automaticExtensionThresholdMs, ttl / 2). An aborted signal means: stop touching the
 * protected resource now; the lock is still valid for up to that threshold, which is the routine's
 * time to wind down (with fencing, the storage refuses a late write anyway).
 */
export async function runUsing<T>(
  host: UsingHost,
  lock: Lock,
  ttlMs: number,
  routine: (signal: AbortSignal, lock: Lock) => Promise<T>,
  outer?: AbortSignal,
): Promise<T> {
  const { settings } = host;
  const controller = new AbortController();
  const threshold = Math.min(settings.automaticExtensionThresholdMs, Math.floor(ttlMs / 2));
  let timer: NodeJS.Timeout | null = null;
  let expiryTimer: NodeJS.Timeout | null = null;
  let extending: Promise<void> | null = null;
  let extensions = 0;
  let stopped = false;

  const abort = (reason: Error): void => {
    if (controller.signal.aborted || stopped) return;
    host.lockLost(lock, reason);
    controller.abort(reason);
  };
  const expire = (): void => {
    abort(new LockExpiredError("using(): the lock's validity ran out before it could be extended", [], lock.resources));
  };
  const schedule = (): void => {
    if (stopped) return;
    timer = setTimeout(tick, Math.max(0, lock.validityMs - threshold));
    timer.unref();
    // Whatever happens to the extension (slow, stuck behind a busy event loop), the routine hears
    // when the validity it was promised is over.
    if (expiryTimer) clearTimeout(expiryTimer);
    expiryTimer = setTimeout(expire, lock.validityMs);
    expiryTimer.unref();
  };
  const tick = (): void => {
    timer = null;
    if (stopped) return;
    if (extensions >= settings.maxExtensions) {
      abort(
        new LockExpiredError(`using(): the lock reached maxExtensions (${settings.maxExtensions}) and will expire`, [], lock.resources),
      );
      return;
    }
    extending = lock
      .extend(ttlMs)
      .then(
        () => {
          extensions++;
          schedule();
        },
        (err: unknown) => abort(err instanceof Error ? err : new Error(String(err))),
      )
      .finally(() => {
        extending = null;
      })
      .catch(() => undefined); // a throwing 'lock-lost' listener must not become an unhandled rejection
  };
  // The caller's signal cancels waiting for the lock, and, once held, the routine too.
  const onOuterAbort = (): void => {
    if (!controller.signal.aborted) controller.abort(outer?.reason);
  };
  outer?.addEventListener('abort', onOuterAbort, { once: true });
  if (outer?.aborted) onOuterAbort();

  schedule();
  try {
    return await routine(controller.signal, lock);
  } finally {
    stopped = true;
    if (timer) clearTimeout(timer);
    if (expiryTimer) clearTimeout(expiryTimer);
    outer?.removeEventListener('abort', onOuterAbort);
    if (extending) await extending;
    await lock.release();
  }
}
