import 'server-only';
import { LockIndex } from '../inspect';
import { getRuntime, type Runtime } from './runtime';

/** An index nobody asked for a snapshot this long stops (its subscriptions and memory go); the next request rebuilds it. */
const IDLE_STOP_MS = 10 * 60_000;
let live: { index: LockIndex; runtime: Runtime; timer: NodeJS.Timeout | null } | undefined;

/**
 * The console's live lock index (lib/inspect/lock-index.ts) over the runtime's nodes, made on
 * first use and shared by every request: the Locks screen's snapshots re-read only what changed
 * instead of rescanning every node. Notifications are turned on only on nodes the console runs
 * (sandbox); external nodes without them are scanned in full, as before.
 */
export function lockIndex(): LockIndex | null {
  const runtime = getRuntime();
  if (runtime.clients.length === 0) return null;
  if (live && live.runtime !== runtime) resetLockIndex();
  let entry = live;
  if (!entry) {
    entry = {
      index: new LockIndex(runtime.clients, {
        keyPrefix: runtime.keyPrefix,
        manageConfig: runtime.mode === 'sandbox',
        configuredNodes: runtime.endpoints.length,
        driftFactor: runtime.driftFactor,
        maxTtlMs: runtime.maxTtlMs,
      }),
      runtime,
      timer: null,
    };
    live = entry;
  }
  const current = entry;
  if (current.timer) clearTimeout(current.timer);
  current.timer = setTimeout(() => {
    if (live === current) resetLockIndex();
  }, IDLE_STOP_MS);
  current.timer.unref();
  return current.index;
}

/** Stop and drop the index (the next request builds a new one): after a runtime change, and for the bench's cold start. */
export function resetLockIndex(): void {
  const entry = live;
  if (!entry) return;
  live = undefined;
  if (entry.timer) clearTimeout(entry.timer);
  entry.index.stop();
}
