import type { Redis } from 'ioredis';
import { isRedlockClient, type RedlockClient } from './client';
import { ioredisClient, isIoredis } from './client-ioredis';
import { isNodeRedis, nodeRedisClient, type NodeRedisClientLike } from './client-node-redis';

/** A node as `new Redlock(nodes)` takes it: a URL, an ioredis 5/6 client, a node-redis 5 client, or an adapter. */
export type RedlockNodeTarget = string | Redis | NodeRedisClientLike | RedlockClient;

/** The adapter for a client passed in, by its shape; null when it is none of the clients supported. */
export function toRedlockClient(target: object): RedlockClient | null {
  if (isRedlockClient(target)) return target;
  if (isIoredis(target)) return ioredisClient(target);
  if (isNodeRedis(target)) return nodeRedisClient(target);
  return null;
}
