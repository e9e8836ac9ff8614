import { Redis } from 'ioredis';

/** Something holding a lock: the libraries' own lock objects, or the raw floor's. */
export interface Held {
  release(): Promise<unknown>;
}

export type PeerId =
  | 'ours'
  | 'ours-fenced'
  | 'node-redlock'
  | 'node-redlock-noap'
  | 'semaphore'
  | 'semaphore-noap'
  | 'universal'
  | 'universal-noap'
  | 'sesame'
  | 'raw'
  | 'raw-noap';

export const PEER_LABELS: Record<PeerId, string> = {
  ours: 'ours (fenced: false)',
  'ours-fenced': 'ours (fenced: true)',
  'node-redlock': 'node-redlock + auto-pipelining',
  'node-redlock-noap': 'node-redlock, no auto-pipelining',
  semaphore: 'redis-semaphore RedlockMutex + auto-pipelining',
  'semaphore-noap': 'redis-semaphore RedlockMutex, no auto-pipelining',
  universal: 'redlock-universal + auto-pipelining',
  'universal-noap': 'redlock-universal, no auto-pipelining',
  sesame: '@sesamecare-oss/redlock + auto-pipelining',
  raw: 'raw ioredis floor + auto-pipelining',
  'raw-noap': 'raw ioredis floor, no auto-pipelining',
};

/** One lock library (or the floor) on the bench's masters, with its own connections. */
export interface LockClient {
  readonly id: PeerId;
  readonly label: string;
  /** Acquire `resource`; `once`: a single attempt, no retries. */
  acquire(resource: string, ttlMs: number, once?: boolean): Promise<Held>;
  /** The Redis key a lock on `resource` is written to (to check that it really holds a majority). */
  keyOf(resource: string): string;
  /** One entry per node, in node order (its connection; for ours, the core's node). */
  readonly connections: readonly unknown[];
  /** Commands written to node i and not answered yet, as the client's ioredis queues hold them. */
  queued(i: number): number;
  close(): Promise<void>;
}

export interface PeerSettings {
  /** Retries after a failed attempt (every library's default is 10). */
  retryCount?: number;
}

/**
 * Commands a client holds for its node and has no answer to: written and waiting (`commandQueue`),
 * waiting for a connection (`offlineQueue`), and, with auto-pipelining, waiting in the next
 * automatic pipeline (ioredis runs one automatic pipeline per node at a time, so while one is
 * unanswered the next one grows). ioredis internals, stable across v5.
 */
export function queuedCommands(client: Redis): number {
  const internal = client as unknown as {
    commandQueue?: { length: number };
    offlineQueue?: { length: number };
    _autoPipelines?: Map<string, { length?: number }>;
  };
  let queued = (internal.commandQueue?.length ?? 0) + (internal.offlineQueue?.length ?? 0);
  for (const pipeline of internal._autoPipelines?.values() ?? []) queued += pipeline.length ?? 0;
  return queued;
}

export function connect(urls: readonly string[], autoPipelining: boolean): Redis[] {
  return urls.map((url) => {
    const client = new Redis(url, { enableAutoPipelining: autoPipelining });
    client.on('error', () => undefined);
    return client;
  });
}

export async function closeAll(clients: readonly Redis[]): Promise<void> {
  // A client whose node never answered cannot QUIT: disconnect outright.
  for (const client of clients) client.disconnect();
  await Promise.resolve();
}
