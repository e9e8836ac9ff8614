/**
 * How a local master keeps its data across a restart. `rdb` is Redis's own default (snapshots at
 * `save 3600 1 300 100 60 10000`, no AOF): a crash brings the node back with its last snapshot,
 * older than what it held, which the lock core's restart detection must catch.
 */
export type Persistence = 'none' | 'rdb' | 'aof-everysec' | 'aof-always';

export const PERSISTENCE_MODES: readonly Persistence[] = Object.freeze(['none', 'rdb', 'aof-everysec', 'aof-always']);

/** Redis's default snapshot schedule (redis.conf `save`). */
export const DEFAULT_SAVE_POINTS = '3600 1 300 100 60 10000';

export function isPersistence(value: unknown): value is Persistence {
  return typeof value === 'string' && (PERSISTENCE_MODES as readonly string[]).includes(value);
}

/**
 * redis-server arguments for a persistence mode. RDB snapshots are off but in `rdb`: they would
 * make `none` keep data across a graceful stop and blur what each mode teaches.
 */
export function persistenceArgs(mode: Persistence): string[] {
  switch (mode) {
    case 'none':
      return ['--save', '', '--appendonly', 'no'];
    case 'rdb':
      return ['--save', DEFAULT_SAVE_POINTS, '--appendonly', 'no'];
    case 'aof-everysec':
      return ['--save', '', '--appendonly', 'yes', '--appendfsync', 'everysec'];
    case 'aof-always':
      return ['--save', '', '--appendonly', 'yes', '--appendfsync', 'always'];
  }
}
