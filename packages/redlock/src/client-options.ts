import type { RedisOptions } from 'ioredis';
import { reconnectDelayMs } from './connection';

/** Options of the pub/sub connections that wake waiters (a SUBSCRIBE may wait for the connection). */
export const SUBSCRIBER_OPTIONS: Readonly<RedisOptions> = Object.freeze({
  enableOfflineQueue: true,
  // Resubscribed by ReleaseWaiters on 'ready', with the rejection handled (see waiters.ts).
  autoResubscribe: false,
  maxRetriesPerRequest: 1,
  enableAutoPipelining: false,
  connectTimeout: 2_000,
  retryStrategy: reconnectDelayMs,
});
