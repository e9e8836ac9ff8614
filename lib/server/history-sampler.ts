import 'server-only';
import { lastSampleAt } from './history';
import { listLocks } from './inspect-service';
import { logger } from './logger';
import { listNodes } from './nodes-service';
import { getRuntime } from './runtime';

/** How often the charts get a reading when no screen asks: node RTTs and lock counts. */
export const SAMPLE_EVERY_MS = 5_000;
let sampling: NodeJS.Timeout | undefined;

/**
 * Keep the charts' history filled while nobody looks: every SAMPLE_EVERY_MS, read the nodes and
 * the lock counts unless a screen's own read recorded them within that time (so an open console
 * adds no load). The lock counts come from the live lock index: only keys that changed are read.
 * Started once per process (instrumentation.ts); a failed reading is a gap in the charts, never a
 * crash.
 */
export function startHistorySampler(everyMs = SAMPLE_EVERY_MS): () => void {
  if (sampling) return () => stopHistorySampler();
  let busy = false;
  const tick = async () => {
    if (busy) return;
    busy = true;
    try {
      if (getRuntime().mode === 'unconfigured') return;
      const due = Date.now() - everyMs;
      if (lastSampleAt('nodes') < due) await listNodes();
      if (lastSampleAt('locks') < due) await listLocks({ limit: 1 });
    } catch (err) {
      logger().debug({ err }, 'history sampler: a reading failed (a gap in the charts)');
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => void tick(), everyMs);
  timer.unref();
  sampling = timer;
  return () => stopHistorySampler();
}

export function stopHistorySampler(): void {
  if (sampling) clearInterval(sampling);
  sampling = undefined;
}
