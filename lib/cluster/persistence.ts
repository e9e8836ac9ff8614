import type { Persistence } from '../api/persistence';

// The persistence modes are part of the API's contract (lib/api/persistence.ts); how a local
// master runs each one is the cluster's.
export { isPersistence, PERSISTENCE_MODES, type Persistence } from '../api/persistence';

/** Redis's default snapshot schedule (redis.conf `save`). */
export const DEFAULT_SAVE_POINTS = '3600 1 300 100 60 10000';

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
