import type { Redis } from 'ioredis';
import { branded, type RedlockClient, type RedlockClientCommand, type RedlockSubscription, type SubscriptionHandlers } from './client';
import { SUBSCRIBER_OPTIONS } from './client-options';

/** Is `target` an ioredis client (5 or 6)? By shape: the core imports no client at run time for it. */
export function isIoredis(target: object): target is Redis {
  const t = target as Partial<Redis>;
  return typeof t.pipeline === 'function' && typeof t.evalsha === 'function' && typeof t.duplicate === 'function';
}

/** How an ioredis client is named: its socket path, `sentinel:<master name>`, or host:port. */
export function ioredisLabel(client: Redis): string {
  const options = client.options;
  if (options.path) return options.path;
  // A Sentinel-managed client: its master's name (its host option is a placeholder).
  if (Array.isArray(options.sentinels) && options.sentinels.length > 0 && options.name) return `sentinel:${options.name}`;
  return `${options.host ?? '127.0.0.1'}:${options.port ?? 6379}`;
}

/**
 * The adapter for an ioredis 5 or 6 client passed in (the default; RESP2 or RESP3, any
 * replyMapping, stringNumbers, auto-pipelining). Through ioredis's public API only.
 */
export function ioredisClient(client: Redis): RedlockClient {
  return branded({
    kind: 'ioredis',
    label: ioredisLabel(client),
    target: client,
    isReady: () => client.status === 'ready',
    onReady: (listener: () => void) => void client.on('ready', listener),
    send: (commands: readonly RedlockClientCommand[]) => sendPipeline(client, commands),
    subscribe: (channel: string, handlers: SubscriptionHandlers) =>
      subscribeIoredis(() => client.duplicate({ ...SUBSCRIBER_OPTIONS }), channel, handlers),
  });
}

/**
 * The commands of one tick, through `pipeline().callBuffer` (ioredis 5 and 6 alike): in order on
 * the client's connection, whatever its version, protocol or pipelining options. One pipeline,
 * written at once (as the corked batch of an owned connection is). Always a pipeline, even for one
 * command: a client with enableAutoPipelining loses the command name of a bare callBuffer on its
 * way into the automatic pipeline (ioredis 5 and 6 alike).
 */
function sendPipeline(client: Redis, commands: readonly RedlockClientCommand[]): void {
  const pipeline = client.pipeline();
  for (let i = 0; i < commands.length; i++) {
    const command = commands[i]!;
    const [name, ...args] = command.args;
    pipeline.callBuffer(name!.toString('latin1'), ...args, (err: Error | null | undefined, value: unknown) =>
      err ? command.settle(err) : command.settle(null, value),
    );
  }
  // Each command's callback has its answer; the pipeline's own promise adds nothing.
  pipeline.exec().catch(() => undefined);
}

/**
 * A release-channel subscription on a new ioredis connection (`create`: the core's own for a URL
 * node, a duplicate of a client passed in). After a reconnect it subscribes again itself:
 * ioredis's autoResubscribe leaves the promise of its SUBSCRIBE unhandled (a connection dropping
 * again, or quit(), became an unhandled rejection in the application).
 */
export function subscribeIoredis(create: () => Redis, channel: string, handlers: SubscriptionHandlers): RedlockSubscription {
  const sub = create();
  sub.on('error', (err: Error) => handlers.error(err));
  sub.on('message', (_channel: string, resource: string) => handlers.message(resource));
  let closed = false;
  const subscribe = () =>
    void sub.subscribe(channel).then(
      () => {
        if (!closed) handlers.subscribed();
      },
      (err: unknown) => {
        if (!closed) handlers.error(err instanceof Error ? err : new Error(String(err)));
      },
    );
  subscribe();
  let first = true;
  sub.on('ready', () => {
    if (first) {
      first = false;
      return;
    }
    if (!closed) subscribe();
  });
  return {
    close: () => {
      closed = true;
      sub.disconnect();
    },
  };
}
