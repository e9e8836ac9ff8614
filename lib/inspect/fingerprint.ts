import type { Redis } from 'ioredis';

/**
 * What would change if a node's keys were replaced without a keyspace notification per key: a
 * restart (run_id), a full resync or a change of role (role, master_replid), or a command that
 * drops or swaps whole keyspaces (FLUSHALL, FLUSHDB, SWAPDB, DEBUG RELOAD…: their call counts).
 * The live index compares it before trusting its copy of a node; CONFIG RESETSTAT also changes it,
 * which only costs a rescan. One INFO call.
 */
const FIELDS = ['run_id', 'role', 'master_replid'];
const COMMANDS = ['flushall', 'flushdb', 'swapdb', 'debug', 'replicaof', 'slaveof', 'failover'];

export async function nodeFingerprint(client: Redis): Promise<string> {
  const info = await client.info('server', 'replication', 'commandstats');
  const parts: string[] = [];
  for (const line of info.split('\n')) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const name = line.slice(0, colon);
    if (FIELDS.includes(name)) parts.push(line.trim());
    else if (name.startsWith('cmdstat_') && COMMANDS.includes(name.slice(8))) {
      parts.push(`${name}=${/calls=(\d+)/.exec(line)?.[1] ?? '?'}`);
    }
  }
  return parts.sort().join(' ');
}
