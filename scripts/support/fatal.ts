import { ClusterConfigError, NodeActionError } from '../../lib/cluster/errors';
import { ConfigError } from '../../lib/config/errors';

/** A command line a script cannot read (or an action it cannot take): one line, exit 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** Configuration problems, usage mistakes and refused node actions print one clear line; anything else is a bug and keeps its stack. */
export function describeFatal(err: unknown): string {
  if (err instanceof ConfigError || err instanceof ClusterConfigError || err instanceof UsageError || err instanceof NodeActionError)
    return `error: ${err.message}`;
  if (err instanceof Error) return `error: ${err.stack ?? err.message}`;
  return `error: ${String(err)}`;
}
