import { ClusterConfigError } from '../../lib/cluster/errors';
import { ConfigError } from '../../lib/config/errors';

/** Configuration problems print one clear line; anything else is a bug and keeps its stack. */
export function describeFatal(err: unknown): string {
  if (err instanceof ConfigError || err instanceof ClusterConfigError) return `error: ${err.message}`;
  if (err instanceof Error) return `error: ${err.stack ?? err.message}`;
  return `error: ${String(err)}`;
}
