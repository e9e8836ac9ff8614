import 'server-only';
import type { Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createConsoleServer } from '../http/front';
import type { ConnectionLimits } from '../http/connection-limits';
import { lockCore } from '../lock-core';
import { flushLockHistory } from '../lock-history';
import { logger } from '../logger';
import { serveIfLockService } from './index';
import { serveServiceRoute, type ServiceState } from './service-routes';
import { acquiresSettled, stopWaitingAcquires } from './replica-stopping';
import { getRuntime } from '../runtime';

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
  /** Drain and stop: readiness 503 at once, no new connections, requests in flight answered (up to `drainMs`; acquires still waiting then get a 503), the lock history written, the core's connections closed. */
  stop(drainMs: number): Promise<void>;
}

/** How long the answers of the acquires stopped at the drain's end get to be written (and the least time they get to settle). */
const STOPPED_ANSWERS_MS = 1_000;
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
  /** The answers Node's parser is writing now (a drain makes each close its connection). */
  const answering = new Set<ServerResponse>();
  // The core's connections open before the first request (a first acquire must not pay for them).
  lockCore();
  const { server, lean } = createConsoleServer(options.limits, (req, res) => serveServiceRoute(req, res, state), {
    serveFirst: (req, res) => {
      closeAfterwardWhileDraining(res, state, answering);
      return serveIfLockService(req, res);
    },
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
        for (const res of answering) res.shouldKeepAlive = false;
        const closed = new Promise<void>((done) => server.close(() => done()));
        server.closeIdleConnections();
        lean?.closeIdle();
        // Connections Node's parser reads that are busy now close after their answer (closeAfterwardWhileDraining).
        const within = (ms: number) => Promise.race([closed, new Promise((done) => setTimeout(done, ms).unref())]);
        await within(drainMs);
        // Acquires still waiting are stopped and answered 503 (replica-stopping.ts), not reset. The
        // core's connections stay open until they have settled: a grant that lands after the stop
        // is released first, which can take a node timeout or two.
        stopWaitingAcquires();
        await acquiresSettled(Math.max(STOPPED_ANSWERS_MS, 2 * getRuntime().nodeTimeoutMs + 500));
        await within(STOPPED_ANSWERS_MS);
        const flush = () => Promise.race([flushLockHistory(), new Promise((done) => setTimeout(done, FLUSH_AT_STOP_MS).unref())]);
        await flush();
        server.closeAllConnections();
        lean?.closeAll();
        // Handlers cut off by the close may have recorded entries since: write those too.
        await flush();
        await lockCore()
          .quit()
          .catch(() => undefined);
      })();
      return stopped;
    },
  };
}

/**
 * While the service drains, an answer on a connection Node's parser reads says `Connection: close`
 * and the connection closes after it: no new request is taken on a kept-alive connection once
 * SIGTERM came (the lean connections do the same: closeIdle).
 */
function closeAfterwardWhileDraining(res: ServerResponse, state: ServiceState, answering: Set<ServerResponse>): void {
  if (state.draining) res.shouldKeepAlive = false;
  answering.add(res);
  res.once('close', () => answering.delete(res));
}
