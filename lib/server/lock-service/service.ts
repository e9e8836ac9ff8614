import 'server-only';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createConsoleServer } from '../http/front';
import type { ConnectionLimits } from '../http/connection-limits';
import { lockCore } from '../lock-core';
import { flushLockHistory } from '../lock-history';
import { logger } from '../logger';
import { serveIfLockService } from './index';
import { serveServiceRoute, type ServiceState } from './service-routes';

/**
 * The lock service as a program of its own (the data plane: scripts/lock-service-server.ts runs
 * it): acquire, extend and release, its health, readiness and metrics, and nothing else. One
 * process, one copy of lib/ (no Next.js here), one way in: every connection is admitted by the
 * connection guard and read by the lean reader (lean-connection.ts), which hands the unusual
 * requests (chunked bodies, other routes) to Node's parser on the same handler; no route has
 * another owner in this process. State is the masters' (locks, fences, sessions, API-key
 * quotas, lock history): replicas of this process behind a load balancer share it there.
 */
export interface LockService {
  server: Server;
  port: number;
  state: ServiceState;
  /** Drain and stop: readiness 503 at once, no new connections, requests in flight answered (up to `drainMs`), the lock history written, the core's connections closed. */
  stop(drainMs: number): Promise<void>;
}

/** How long a stop waits for each write of the buffered lock history (a master down must not hold the exit). */
const FLUSH_AT_STOP_MS = 400;

/**
 * REDLOCK_LEAN_HTTP: `on` (the default) puts the lean reader in front; `off` lets Node's own parser
 * read every request (a diagnostic, and the bench's A/B: the lean reader stays only while it pays
 * for itself). Anything else stops the start with a message, never a silent default.
 */
export function leanHttpSetting(value: string | undefined): boolean {
  const v = value?.trim().toLowerCase() ?? '';
  if (v === '' || v === 'on') return true;
  if (v === 'off') return false;
  throw new Error(`REDLOCK_LEAN_HTTP takes on or off; got "${value}"`);
}

export async function startLockService(options: {
  port: number;
  host: string;
  limits: ConnectionLimits;
  /** The lean reader in front (default: REDLOCK_LEAN_HTTP, on unless it says off). */
  lean?: boolean;
}): Promise<LockService> {
  const leanReader = options.lean ?? leanHttpSetting(process.env.REDLOCK_LEAN_HTTP);
  const state: ServiceState = { draining: false };
  // The core's connections open before the first request (a first acquire must not pay for them).
  lockCore();
  const { server, lean } = createConsoleServer(options.limits, (req, res) => serveServiceRoute(req, res, state), {
    serveFirst: serveIfLockService,
    lean: leanReader,
  });
  await new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen(options.port, options.host, () => {
      server.off('error', fail);
      done();
    });
  });
  server.on('error', (err) => logger().error({ err }, 'the lock service server failed'));
  let stopped: Promise<void> | null = null;
  return {
    server,
    port: (server.address() as AddressInfo).port,
    state,
    stop(drainMs) {
      stopped ??= (async () => {
        state.draining = true;
        const closed = new Promise<void>((done) => server.close(() => done()));
        server.closeIdleConnections();
        lean?.closeIdle();
        await Promise.race([closed, new Promise((done) => setTimeout(done, drainMs).unref())]);
        server.closeAllConnections();
        lean?.closeAll();
        await Promise.race([flushLockHistory(), new Promise((done) => setTimeout(done, FLUSH_AT_STOP_MS).unref())]);
        await lockCore()
          .quit()
          .catch(() => undefined);
      })();
      return stopped;
    },
  };
}
