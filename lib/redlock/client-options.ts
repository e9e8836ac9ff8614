import type { RedisOptions } from 'ioredis';

/**
 * Options of the connections the lock core opens itself (nodes given as URLs). No offline queue
 * and no resending: a command to a node that is down fails at once (the node votes `error`, and a
 * round that can no longer reach its quorum is decided without waiting), and nothing piles up
 * behind a dead connection. Auto-pipelining batches the commands of one tick into one write.
 */
export const OWNED_CLIENT_OPTIONS: Readonly<RedisOptions> = Object.freeze({
  enableOfflineQueue: false,
  maxRetriesPerRequest: 0,
  autoResendUnfulfilledCommands: false,
  enableAutoPipelining: true,
  connectTimeout: 2_000,
  retryStrategy: (times: number) => Math.min(25 * 2 ** Math.min(times, 5), 500),
});

/** Options of the pub/sub connections that wake waiters (a SUBSCRIBE may wait for the connection). */
export const SUBSCRIBER_OPTIONS: Readonly<RedisOptions> = Object.freeze({
  enableOfflineQueue: true,
  // Resubscribed by ReleaseWaiters on 'ready', with the rejection handled (see waiters.ts).
  autoResubscribe: false,
  maxRetriesPerRequest: 1,
  enableAutoPipelining: false,
  connectTimeout: 2_000,
  retryStrategy: (times: number) => Math.min(25 * 2 ** Math.min(times, 5), 500),
});
