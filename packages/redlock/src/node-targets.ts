import type { Redis } from 'ioredis';
import { InvalidArgumentError } from './errors';
import { nodeLabel } from './node-label';
import { describe } from './settings';

/**
 * The nodes given to `new Redlock(nodes)`, checked before any connection is opened: 1 to 64 redis://
 * URLs or ioredis clients, no Redis Cluster client, no client with ioredis's `keyPrefix`, no node
 * twice (the same client, or two that name the same server: counting one server twice would let a
 * minority pass for a quorum). Returns each node's label, in order.
 */
export function checkNodeTargets(nodes: unknown): string[] {
  if (!Array.isArray(nodes) || nodes.length === 0) throw new InvalidArgumentError('nodes', 'at least one node is needed');
  if (nodes.length > 64) throw new InvalidArgumentError('nodes', `at most 64 nodes, got ${nodes.length}`);
  for (const target of nodes) {
    if (typeof target !== 'string' && (typeof target !== 'object' || target === null || typeof (target as Redis).evalsha !== 'function')) {
      throw new InvalidArgumentError('nodes', `each node must be a redis:// URL or an ioredis client, got ${describe(target)}`);
    }
  }
  for (const target of nodes) {
    if (typeof target === 'string') continue;
    // A Cluster spreads one node's commands over several masters and re-sends a pipeline after
    // MOVED or CLUSTERDOWN on timers of its own: a failed attempt's release could run before its
    // SET, and a batch across slots is refused without a reply. Redlock wants independent masters.
    if ((target as { isCluster?: boolean }).isCluster === true) {
      throw new InvalidArgumentError(
        'nodes',
        'a Redis Cluster client cannot be a node: give each independent master as a URL or a plain client',
      );
    }
    // ioredis prefixes the keys of known commands (a string or Buffer keyPrefix): the lock core's keys would move.
    const prefix = (target.options as { keyPrefix?: string | Buffer } | undefined)?.keyPrefix;
    if (prefix !== undefined && prefix !== null && prefix.length > 0) {
      throw new InvalidArgumentError(
        'nodes',
        `a client with the ioredis keyPrefix option (${JSON.stringify(String(prefix))}) would move the lock core's keys: ` +
          'pass a client without it and use the keyPrefix setting',
      );
    }
  }
  if (new Set(nodes).size !== nodes.length) throw new InvalidArgumentError('nodes', 'the same client is listed twice');
  // Labels are checked (URLs parsed, duplicates refused) before any connection is opened.
  const labels = nodes.map((target) => nodeLabel(target as string | Redis));
  if (new Set(labels).size !== labels.length) {
    // Counting one server twice would let a minority pass for a quorum.
    throw new InvalidArgumentError('nodes', `a node is listed twice (${labels.join(', ')})`);
  }
  return labels;
}
