import { ClusterConfigError } from './errors';
import type { Persistence } from './persistence';
import { isPortFree } from './ports';

export interface ClusterOptions {
  /** Directory holding one data directory per node (`node-1` …) and the pid registry. */
  dataRoot: string;
  /** Number of masters, 1…15. @default 5 */
  nodes?: number;
  host?: string;
  /** redis-server of node i listens on portBase + i − 1; omit for any free ports. */
  portBase?: number;
  /** With proxies, the proxy of node i listens on proxyPortBase + i − 1; omit for any free ports. */
  proxyPortBase?: number;
  /** Put a fault proxy in front of every node (clients use the proxy's port). @default true */
  proxies?: boolean;
  /** One mode for all nodes, or one per node. @default 'aof-always' */
  persistence?: Persistence | readonly Persistence[];
  /** Path of redis-server; found on PATH when omitted. */
  binary?: string;
  /** Key prefix and lease ceiling written into the clean epoch sentinel of brand-new data dirs. */
  keyPrefix?: string;
  maxTtlMs?: number;
  extraArgs?: readonly string[];
  /** Spawn the watchdog that kills the nodes if this process dies abruptly. @default true */
  lifeline?: boolean;
  /**
   * The password every node requires (`requirepass`, in a 0600 config file, never on a command
   * line). Omitted: generated once into `<dataRoot>/redis.secret` (0600) and kept. null: none (a
   * harness that builds its own connections, e.g. the chaos harness and the bench).
   */
  password?: string | null;
}

/** The options with their defaults filled in, as the supervisor holds them. */
export type ResolvedClusterOptions = Required<Pick<ClusterOptions, 'dataRoot' | 'host' | 'keyPrefix' | 'maxTtlMs'>> & ClusterOptions;

export async function assertPortsFree(host: string, base: number | undefined, count: number, envName: string): Promise<void> {
  if (base === undefined) return;
  if (!Number.isInteger(base) || base < 1 || base + count - 1 > 65_535) {
    throw new ClusterConfigError(`${envName} must be a port from 1 to ${65_536 - count}, got ${base}`, 'BAD_CONFIG');
  }
  for (let port = base; port < base + count; port++) {
    if (!(await isPortFree(port, host))) {
      throw new ClusterConfigError(
        `port ${port} on ${host} is already in use (another redlock-console or redis-server?); stop it or set ${envName} to a free range`,
        'PORT_IN_USE',
      );
    }
  }
}
