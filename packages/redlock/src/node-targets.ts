import type { RedlockClient } from './client';
import { toRedlockClient } from './client-detect';
import { isIoredis } from './client-ioredis';
import { isNodeRedisCluster } from './client-node-redis';
import { InvalidArgumentError } from './errors';
import { nodeLabel } from './node-label';
import { describe } from './settings';

/**
 * The nodes given to `new Redlock(nodes)`, checked before any connection is opened: 1 to 64 redis://
 * URLs or clients (ioredis 5/6, node-redis 5, or an adapter: client.ts), no Redis Cluster client,
 * no client with ioredis's `keyPrefix`, no node twice (the same client, or two that name the same
 * server: counting one server twice would let a minority pass for a quorum). Returns each node as
 * a URL or its client's adapter, and its label, in order.
 */
export function checkNodeTargets(nodes: unknown): { targets: Array<string | RedlockClient>; labels: string[] } {
  if (!Array.isArray(nodes) || nodes.length === 0) throw new InvalidArgumentError('nodes', 'at least one node is needed');
  if (nodes.length > 64) throw new InvalidArgumentError('nodes', `at most 64 nodes, got ${nodes.length}`);
  const targets: Array<string | RedlockClient> = [];
  for (const target of nodes) {
    if (typeof target === 'string') {
      targets.push(target);
      continue;
    }
    // A Cluster spreads one node's commands over several masters and re-sends a pipeline after
    // MOVED or CLUSTERDOWN on timers of its own: a failed attempt's release could run before its
    // SET, and a batch across slots is refused without a reply. Redlock wants independent masters.
    if (
      typeof target === 'object' &&
      target !== null &&
      ((target as { isCluster?: boolean }).isCluster === true || isNodeRedisCluster(target))
    ) {
      throw new InvalidArgumentError(
        'nodes',
        'a Redis Cluster client cannot be a node: give each independent master as a URL or a plain client',
      );
    }
    const client = typeof target === 'object' && target !== null ? toRedlockClient(target) : null;
    if (!client) {
      throw new InvalidArgumentError(
        'nodes',
        `each node must be a redis:// URL, an ioredis or node-redis client, or a RedlockClient adapter, got ${describe(target)}`,
      );
    }
    // ioredis prefixes the keys of known commands (a string or Buffer keyPrefix): the lock core's keys would move.
    const prefix = isIoredis(target as object) ? (target as { options?: { keyPrefix?: string | Buffer } }).options?.keyPrefix : undefined;
    if (prefix !== undefined && prefix !== null && prefix.length > 0) {
      throw new InvalidArgumentError(
        'nodes',
        `a client with the ioredis keyPrefix option (${JSON.stringify(String(prefix))}) would move the lock core's keys: ` +
          'pass a client without it and use the keyPrefix setting',
      );
    }
    targets.push(client);
  }
  const identities = targets.map((t) => (typeof t === 'string' ? t : t.target));
  if (new Set(nodes).size !== nodes.length || new Set(identities).size !== identities.length) {
    throw new InvalidArgumentError('nodes', 'the same client is listed twice');
  }
  // Labels are checked (URLs parsed, duplicates refused) before any connection is opened.
  const labels = targets.map((target) => nodeLabel(target));
  if (new Set(labels).size !== labels.length) {
    // Counting one server twice would let a minority pass for a quorum.
    throw new InvalidArgumentError('nodes', `a node is listed twice (${labels.join(', ')})`);
  }
  return { targets, labels };
}
