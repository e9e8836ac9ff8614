import { AsyncResource } from 'node:async_hooks';

let root: AsyncResource | undefined;

/**
 * Long-lived work (the live events' Redis subscriptions, their timers) must not run inside the
 * async context of the request that happened to start it. Next.js keeps per-request state in
 * AsyncLocalStorage, and everything created in a request's context (sockets, timers, promises)
 * carries that context for good: the first stream's request would stay reachable for the process's
 * life, and every `Date.now()` in those callbacks pays Next.js's per-request checks (its Date
 * extension looks the request up on each call). The events' Redis callbacks ran in the
 * first /api/events request's context.
 *
 * The server (scripts/console-server.ts) captures the root context before it serves anything;
 * `inRootContext` runs a function there. Without a captured root (tests, tools), it runs in place.
 */
export function captureRootContext(): void {
  root ??= new AsyncResource('redlock-console.root');
}

export function inRootContext<T>(fn: () => T): T {
  return root ? root.runInAsyncScope(fn) : fn();
}
