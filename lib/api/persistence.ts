/**
 * How a local master keeps its data across a restart. `rdb` is Redis's own default (snapshots at
 * `save 3600 1 300 100 60 10000`, no AOF): a crash brings the node back with its last snapshot,
 * older than what it held, which the lock core's restart detection must catch.
 */
export type Persistence = 'none' | 'rdb' | 'aof-everysec' | 'aof-always';

export const PERSISTENCE_MODES: readonly Persistence[] = Object.freeze(['none', 'rdb', 'aof-everysec', 'aof-always']);

export function isPersistence(value: unknown): value is Persistence {
  return typeof value === 'string' && (PERSISTENCE_MODES as readonly string[]).includes(value);
}
