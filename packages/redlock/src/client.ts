/**
 * The client seam: what the lock core needs of a connection it did not open (a client passed in
 * to `new Redlock(nodes)`). The core's own connections (a URL) do not go through it
 * (connection.ts). Adapters: ioredis 5 and 6 (client-ioredis.ts), node-redis 5
 * (client-node-redis.ts); `toRedlockClient` picks one by the client's shape.
 *
 * What the protocol relies on, and every adapter must keep (the conformance suite,
 * test/integration/redlock-client-seam.test.ts, runs the same checks against each):
 * - `send` puts the commands of one call on the client's ONE connection in the order given, each
 *   answered once (its reply or its error). That per-connection order is all the protocol needs of
 *   a client (a failed attempt's compare-and-delete lands after its SET; protocol.ts): mutual
 *   exclusion (a quorum of SET NX within the validity window) and the fence order (registers read
 *   and raised by the same scripts) are decided by the replies, whoever carries them.
 * - `isReady`/`onReady`: whether the connection is up, and every new connection (a new connection
 *   may reach another process: the node is checked again before its next vote, node.ts).
 * - `subscribe`: a connection of its own for the release channel. Only liveness depends on it
 *   (waiters.ts): a missed message costs a retry delay, never safety.
 */

/** One command for a client passed in: its arguments (name first) and where its answer goes. */
export interface RedlockClientCommand {
  readonly args: readonly Buffer[];
  /** Called once: the error, or null and the reply as the client decoded it (Buffer, string, number, array). */
  settle(err: Error | null, value?: unknown): void;
}

/** Callbacks of a release-channel subscription. */
export interface SubscriptionHandlers {
  /** A message on the channel: the resource released. */
  message(resource: string): void;
  /** The subscription is (again) in place: releases are heard from now on. */
  subscribed(): void;
  error(err: Error): void;
}

/** A subscription's connection; close() ends it. */
export interface RedlockSubscription {
  close(): void;
}

/** A connection the lock core uses but does not own (never closed by quit()). */
export interface RedlockClient {
  /** Which adapter ('ioredis', 'node-redis', or your own). */
  readonly kind: string;
  /** How the node is named in votes and errors: host:port, a socket path or sentinel:<name>; never credentials. */
  readonly label: string;
  /** The client this adapts (a node listed twice is refused by it). */
  readonly target: object;
  isReady(): boolean;
  /** Calls `listener` each time a (new) connection is ready. */
  onReady(listener: () => void): void;
  /** Sends `commands` on the connection in this order (see the contract above). */
  send(commands: readonly RedlockClientCommand[]): void;
  /** Subscribes a new connection of its own to `channel`, and again after each reconnection. */
  subscribe(channel: string, handlers: SubscriptionHandlers): RedlockSubscription;
}

const ADAPTED = Symbol.for('@redlock-console/redlock.RedlockClient');

/** Mark an adapter made by this package (toRedlockClient passes it through). */
export function branded<T extends RedlockClient>(client: T): T {
  Object.defineProperty(client, ADAPTED, { value: true });
  return client;
}

/** Is `value` an adapter (made here, or one of your own with the RedlockClient methods)? */
export function isRedlockClient(value: unknown): value is RedlockClient {
  if (typeof value !== 'object' || value === null) return false;
  if ((value as { [ADAPTED]?: unknown })[ADAPTED] === true) return true;
  const v = value as Partial<RedlockClient>;
  return (
    typeof v.send === 'function' &&
    typeof v.subscribe === 'function' &&
    typeof v.isReady === 'function' &&
    typeof v.onReady === 'function' &&
    typeof v.label === 'string'
  );
}
