import { branded, type RedlockClient, type RedlockClientCommand, type RedlockSubscription, type SubscriptionHandlers } from './client';

type AnyFunction = (...args: never[]) => unknown;

/**
 * What the lock core uses of a node-redis 5 client (`createClient()` from `redis` or
 * `@redis/client`), as a shape: the package is an optional peer, never imported by the core.
 */
export interface NodeRedisClientLike {
  sendCommand: AnyFunction;
  duplicate: AnyFunction;
  readonly isReady: boolean;
  readonly isOpen: boolean;
  on: AnyFunction;
}

interface NodeRedisClient {
  sendCommand(args: readonly (string | Buffer)[], options?: object): Promise<unknown>;
  duplicate(overrides?: object): NodeRedisClient;
  connect(): Promise<unknown>;
  subscribe(channel: string, listener: (message: string) => void): Promise<unknown>;
  destroy?(): void;
  disconnect?(): Promise<unknown>;
  on(event: string, listener: (...args: never[]) => void): unknown;
  readonly isReady: boolean;
  readonly isOpen: boolean;
  readonly options?: { socket?: { host?: string; port?: number; path?: string }; url?: string };
}

/** Is `target` a node-redis client (v5)? By shape: sendCommand and isReady, no ioredis pipeline(). */
export function isNodeRedis(target: object): target is NodeRedisClientLike {
  const t = target as Partial<NodeRedisClient> & { pipeline?: unknown };
  return typeof t.sendCommand === 'function' && typeof t.duplicate === 'function' && 'isReady' in t && typeof t.pipeline !== 'function';
}

/** Is it a node-redis cluster (createCluster): several masters behind one object? */
export function isNodeRedisCluster(target: object): boolean {
  const t = target as { masters?: unknown; slots?: unknown; getSlotRandomNode?: unknown };
  return Array.isArray(t.masters) || typeof t.getSlotRandomNode === 'function';
}

/** How a node-redis client is named: its socket path or host:port (never credentials). */
export function nodeRedisLabel(target: NodeRedisClientLike): string {
  const options = (target as NodeRedisClient).options;
  const socket = options?.socket;
  if (socket?.path) return socket.path;
  if (socket?.host !== undefined || socket?.port !== undefined) return `${socket.host ?? 'localhost'}:${socket.port ?? 6379}`;
  if (options?.url) {
    const url = new URL(options.url);
    return `${url.hostname || 'localhost'}:${url.port || 6379}`;
  }
  return 'localhost:6379';
}

/**
 * Per-command options that override whatever the owner set client-wide (`commandOptions`, merged
 * by spread under these): `asap` would put a command at the head of the write queue, so a batch
 * [TIME, grant, check] queued while offline would go out reversed and a grant's validity would be
 * counted from a clock read after its SET — mutual exclusion broken; a `timeout` or `abortSignal`
 * drops a queued command from the middle of a batch while the later ones still go; a `typeMapping`
 * would hand the core Maps and bigints it does not read. With these, every command of one call
 * is written in the order given, none dropped, replies in the shapes the conformance suite checks.
 */
const IN_ORDER = Object.freeze({ asap: false, timeout: undefined, abortSignal: undefined, typeMapping: {} });

/**
 * The adapter for a node-redis 5 client passed in (RESP2 or RESP3). It must be connected by its
 * owner (`await client.connect()`); the core never connects or closes it. Commands go through
 * `sendCommand` in order: node-redis queues them on its one connection first in, first out and
 * writes them together, which is the order the protocol relies on (client.ts).
 */
export function nodeRedisClient(target: NodeRedisClientLike): RedlockClient {
  const client = target as unknown as NodeRedisClient;
  return branded({
    kind: 'node-redis',
    label: nodeRedisLabel(target),
    target: client,
    isReady: () => client.isReady,
    onReady: (listener: () => void) => void client.on('ready', listener),
    send: (commands: readonly RedlockClientCommand[]) => {
      for (let i = 0; i < commands.length; i++) {
        const command = commands[i]!;
        let sent: Promise<unknown>;
        try {
          sent = client.sendCommand(command.args, IN_ORDER);
        } catch (err) {
          sent = Promise.reject(err instanceof Error ? err : new Error(String(err)));
        }
        sent.then(
          (value) => command.settle(null, value),
          (err: unknown) => command.settle(err instanceof Error ? err : new Error(String(err))),
        );
      }
    },
    subscribe: (channel: string, handlers: SubscriptionHandlers) => subscribeNodeRedis(client, channel, handlers),
  });
}

/**
 * A release-channel subscription on a duplicate of the client (node-redis resubscribes by itself
 * after a reconnection; each 'ready' after the first says the subscription is back).
 */
function subscribeNodeRedis(client: NodeRedisClient, channel: string, handlers: SubscriptionHandlers): RedlockSubscription {
  const sub = client.duplicate();
  let closed = false;
  sub.on('error', (err: Error) => {
    if (!closed) handlers.error(err);
  });
  let first = true;
  sub.on('ready', () => {
    if (first) {
      first = false;
      return;
    }
    if (!closed) handlers.subscribed();
  });
  sub
    .connect()
    .then(() => sub.subscribe(channel, (message) => handlers.message(message)))
    .then(
      () => {
        if (!closed) handlers.subscribed();
        else close();
      },
      (err: unknown) => {
        if (!closed) handlers.error(err instanceof Error ? err : new Error(String(err)));
      },
    );
  const close = () => {
    if (!sub.isOpen) return;
    if (sub.destroy) sub.destroy();
    else void sub.disconnect?.().catch(() => undefined);
  };
  return {
    close: () => {
      closed = true;
      close();
    },
  };
}
