/** How a local master keeps its data across a restart. */
export type Persistence = 'none' | 'aof-everysec' | 'aof-always';

export const PERSISTENCE_MODES: readonly Persistence[] = Object.freeze(['none', 'aof-everysec', 'aof-always']);

export function isPersistence(value: unknown): value is Persistence {
  return typeof value === 'string' && (PERSISTENCE_MODES as readonly string[]).includes(value);
}

/**
 * redis-server arguments for a persistence mode. RDB snapshots are always off: they would make
 * `none` keep data across a graceful stop and blur what each mode teaches.
 */
export function persistenceArgs(mode: Persistence): string[] {
  switch (mode) {
    case 'none':
      return ['--save', '', '--appendonly', 'no'];
    case 'aof-everysec':
      return ['--save', '', '--appendonly', 'yes', '--appendfsync', 'everysec'];
    case 'aof-always':
      return ['--save', '', '--appendonly', 'yes', '--appendfsync', 'always'];
  }
}
