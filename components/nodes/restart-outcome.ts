import type { NodeView } from '@/lib/api/nodes';
import { PERSISTENCE_MODES, type Persistence } from '@/lib/api/persistence';
import { persistenceInfo } from './node-state';

export type { Persistence } from '@/lib/api/persistence';

/** One choice per persistence mode the supervisor can run (the record makes a new mode a compile error here). */
const CHOICE: Record<Persistence, { label: string; hint: string }> = {
  none: { label: 'None', hint: 'comes back empty: the node sits out maxTtlMs (no epoch sentinel)' },
  rdb: { label: 'RDB (Redis default)', hint: 'a crash brings back the last snapshot: the node sits out maxTtlMs' },
  'aof-everysec': { label: 'AOF everysec', hint: 'a crash may lose the last second: the node sits out maxTtlMs' },
  'aof-always': { label: 'AOF always', hint: 'loses nothing acknowledged; after a crash it still sits out maxTtlMs' },
};

export const PERSISTENCE_CHOICES: Array<{ value: Persistence; label: string; hint: string }> = PERSISTENCE_MODES.map((value) => ({
  value,
  ...CHOICE[value],
}));

const label = (mode: string | null) => (mode ? persistenceInfo(mode).label : 'unknown persistence');
const keepsData = (mode: string | null) => mode === 'rdb' || mode === 'aof-everysec' || mode === 'aof-always';
const isAof = (mode: string | null) => mode === 'aof-everysec' || mode === 'aof-always';

/** What a start or restart with `next` persistence brings back, and whether the node votes at once or sits out maxTtl. */
export interface RestartOutcome {
  tone: 'ok' | 'warn';
  title: string;
  text: string;
  /** The supervisor adopts the restart: no quarantine. */
  adopted: boolean;
  /** kept: what it held comes back; older: an earlier state (a snapshot, an AOF from before a period without one); lost: nothing. */
  keys: 'kept' | 'older' | 'lost';
}

/**
 * The supervisor adopts a restart (no quarantine) only after a graceful stop (SHUTDOWN with the
 * persistence flushed, never for 'none', never after a crash) and a start with the same
 * persistence; everything else is a restart the lock core quarantines for maxTtl, whatever it loads.
 */
export function restartOutcome(
  node: Pick<NodeView, 'persistence' | 'process' | 'resumable'>,
  kind: 'start' | 'restart',
  next: Persistence,
  maxTtlMs: number,
): RestartOutcome {
  const ceiling = `the lease ceiling (${Math.round(maxTtlMs / 100) / 10} s)`;
  const running = node.process !== null && node.process !== 'down';
  // The stop this restart makes (running), or the one the supervisor recorded (down).
  const graceful = kind === 'restart' && running ? keepsData(node.persistence) : node.resumable !== null;
  const from = running ? node.persistence : (node.resumable ?? node.persistence);
  if (next === 'none') {
    return {
      tone: 'warn',
      adopted: false,
      keys: 'lost',
      title: 'It comes back empty',
      text: `Without persistence it reads nothing back: it has lost every lock key, so the next acquire finds no epoch sentinel and quarantines it for ${ceiling} before its vote counts again.`,
    };
  }
  if (graceful && from === next) {
    const stop = running
      ? `It is stopped with SHUTDOWN (${next === 'rdb' ? 'a final SAVE' : 'its AOF fsynced'})`
      : `It was stopped gracefully with ${label(next)}`;
    return {
      tone: 'ok',
      adopted: true,
      keys: 'kept',
      title: 'Its keys come back, and it votes at once',
      text: `${stop} and starts with the same persistence, so it holds exactly what it held: the supervisor adopts the restart (written to the audit log) and the lock core does not quarantine it.`,
    };
  }
  let loads: string;
  let keys: RestartOutcome['keys'];
  if (isAof(next) && isAof(from)) {
    keys = 'kept';
    loads = `Its keys come back from its AOF${!graceful && from === 'aof-everysec' ? ', less up to the last second before the crash' : ''}`;
  } else if (isAof(next)) {
    keys = 'older';
    loads = `It loads the AOF it wrote the last time it ran with one, if there is one: keys from before it ran with ${label(from)} come back (locks released since can reappear) and none written since`;
  } else if (from === 'rdb') {
    keys = graceful ? 'kept' : 'older';
    loads = graceful ? 'Its last snapshot comes back' : 'It comes back with its last snapshot, older than what it held';
  } else {
    keys = 'older';
    loads = `It loads the last RDB snapshot in its data directory, if there is one (written the last time it ran with RDB): older than what it holds now`;
  }
  const why =
    from === 'none'
      ? 'it ran without persistence, so nothing vouches for what it loads'
      : graceful
        ? `the persistence changes (${label(from)} → ${label(next)}), so the supervisor does not vouch for it`
        : 'it was not stopped gracefully, and a crash is never vouched for';
  return {
    tone: 'warn',
    adopted: false,
    keys,
    title: `It sits out ${ceiling} as a restart`,
    text: `${loads}. ${why[0]!.toUpperCase()}${why.slice(1)}: the lock core sees a new redis-server process and quarantines it (restart detected) for ${ceiling} from its start before its vote counts.`,
  };
}
