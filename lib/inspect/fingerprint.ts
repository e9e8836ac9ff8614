import type { Redis } from 'ioredis';
import { epochKey } from '@redlock-console/redlock';

/**
 * What changes when a node's keys are replaced or dropped without a keyspace notification per
 * key, so the live index (lock-index.ts) scans the node again instead of trusting its copy:
 * - a restart (`run_id`), a resync or a change of role (`role`, `master_replid`);
 * - a command that drops, swaps or reloads whole keyspaces, or changes what the node publishes:
 *   the call counts of FLUSHALL, FLUSHDB, SWAPDB, DEBUG, REPLICAOF/SLAVEOF, FAILOVER, CONFIG SET
 *   (notifications turned off and on again between two snapshots) and CONFIG RESETSTAT;
 * - evictions (`evicted_keys`: an evicted key's event is in a class we do not ask for);
 * - the lock core's epoch sentinel (`<prefix>epoch`): gone or rewritten after any data loss.
 * A replica, or a node still loading its data, is not indexed at all (`indexable: false`): it is
 * scanned in full each time. Three commands, answered by the node in order.
 */
export interface NodeFingerprint {
  value: string;
  indexable: boolean;
}

const FIELDS = ['run_id', 'role', 'master_replid', 'loading', 'evicted_keys'];
const COMMANDS = ['flushall', 'flushdb', 'swapdb', 'debug', 'replicaof', 'slaveof', 'failover', 'config|set', 'config|resetstat'];

export async function nodeFingerprint(client: Redis, keyPrefix: string): Promise<NodeFingerprint> {
  // Plain INFO holds server, persistence, stats and replication; one section per call (Redis 6 too).
  const [info, commands, epoch] = await Promise.all([
    client.info(),
    client.info('commandstats'),
    client.hget(epochKey(keyPrefix), 'createdAt'),
  ]);
  const fields = new Map<string, string>();
  const parts: string[] = [`epoch=${epoch ?? 'none'}`];
  for (const line of `${info}\n${commands}`.split('\n')) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const name = line.slice(0, colon);
    if (FIELDS.includes(name)) {
      fields.set(name, line.slice(colon + 1).trim());
      if (name !== 'loading') parts.push(line.trim());
    } else if (name.startsWith('cmdstat_') && COMMANDS.includes(name.slice(8))) {
      parts.push(`${name}=${/calls=(\d+)/.exec(line)?.[1] ?? '?'}`);
    }
  }
  return { value: parts.sort().join(' '), indexable: fields.get('role') === 'master' && fields.get('loading') === '0' };
}
