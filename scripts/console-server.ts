/**
 * The console's HTTP server process (started by scripts/start.ts with the console's environment):
 * one Node HTTP server on the console's port. The lock service's three routes (acquire, extend,
 * release: lib/server/lock-service/routes.ts) are answered before Next.js: plain requests to them
 * are read and answered on the socket itself by the lean connections (lean-connection.ts), every
 * connection's first stop; at its first other request a connection is handed to Node's HTTP parser
 * for good, where the same handler answers the lock service's requests on Node's request objects
 * and Next.js's request handler everything else (pages, the rest of the API) but the event stream
 * (GET /api/events: lib/server/events/node-stream.ts) and sign-in and sign-out
 * (lib/server/auth-routes), also answered on Node's objects (lib/server/before-next.ts lists them).
 *
 * Why not only Next.js: a Next.js route handler costs several milliseconds of routing, Web
 * Request/Response conversion and rendering machinery per call, which made the lock service 30–50×
 * slower than the core it wraps. Why the lean connections: Node's HTTP objects
 * (IncomingMessage, ServerResponse, their streams and header objects) then still cost about as much
 * CPU per request as the lock itself. Why not a framework (fastify): it runs on those same objects,
 * and the fast path is three POST routes with one body rule; they share every check, schema,
 * service function and error mapper with the Next.js routes (lib/server/http/request-checks.ts,
 * error-response.ts), so a framework would add a second plugin, validation and error model to keep
 * in step for no gain.
 *
 *   node --import tsx --import ./scripts/support/server-only-hook.mjs scripts/console-server.ts [--dev]
 *
 * The listening address comes from PORT and HOST; NODE_ENV must be set by the caller (production
 * unless --dev), before Next.js is loaded.
 */
import next from 'next';
import { connectionLimits } from '../lib/server/http/connection-limits';
import { quotaSettings } from '../lib/server/quotas/settings';
import { createConsoleServer } from '../lib/server/http/front';
import { stampPeersInServer } from '../lib/server/http/peer';
import { lockCore } from '../lib/server/lock-core';
import { lockServiceUpstream } from '../lib/server/lock-service/forward';
import { flushLockHistory } from '../lib/server/lock-history';
import { logger } from '../lib/server/logger';
import { captureRootContext } from '../lib/server/root-context';
import { appRoot } from './support/app-root';
import { applyBuiltNextConfig } from './support/built-config';

const root = appRoot(import.meta.url);
// Where Next.js's shims of lib/server import this process's copy of each module from
// (scripts/support/node-copy-loader.mjs): the sources (through tsx), or the bundle's modules.
process.env.REDLOCK_SERVER_MODULES = process.env.REDLOCK_SERVER_BUNDLE
  ? `${new URL('./', import.meta.url).href}*.mjs`
  : `${new URL('../', import.meta.url).href}*.ts`;
const dev = process.argv.includes('--dev');
const port = Number(process.env.PORT ?? 3000);
const host = process.env.HOST ?? '127.0.0.1';

/** How long a stop waits for the requests in flight (start.ts kills this process 5 s after its SIGTERM). */
const DRAIN_MS = 3_500;
/** How long a stop waits for each write of the buffered lock history (a master down must not hold the exit). */
const FLUSH_AT_STOP_MS = 400;

async function main(): Promise<void> {
  // Long-lived work started by a request runs in this context, not the request's (root-context.ts).
  captureRootContext();
  // Before the first request: the peer stamp (login limits, audit) and the lock core's connections.
  const stampPeer = stampPeersInServer();
  try {
    lockCore();
  } catch (err) {
    // No masters configured (or a setting the core refuses): the console still serves its pages,
    // which say so; the lock service answers the same error on each request.
    logger().warn({ err }, 'the lock core could not start; the lock service will refuse requests');
  }
  if (!dev) applyBuiltNextConfig(root);
  const app = next({ dev, dir: root, hostname: host, port });
  const handle = app.getRequestHandler();
  await app.prepare();
  // Every connection admitted by the connection guard (caps, idle and request timeouts);
  // plain lock-service requests read and answered on the socket itself, the first other request
  // hands the connection to Node's parser; the routes answered before Next.js, then Next.js
  // (lib/server/http/front.ts). (In --dev, Next.js attaches its hot-reload socket handler to this
  // server on the first request; edits to lib/server take a restart: Next.js's shims import this
  // process's copy, which it does not reload.)
  const limits = connectionLimits();
  quotaSettings(process.env.REDLOCK_API_KEY_QUOTAS); // a bad setting stops the start here, in one line
  // With a lock-service process (REDLOCK_LOCK_SERVICE_URL) the lock routes are forwarded to it, and
  // this server has no lean reader of its own (lib/server/lock-service/forward.ts).
  lockServiceUpstream(); // a bad URL stops the start here
  const { server, lean } = createConsoleServer(limits, (req, res, connection) => {
    stampPeer(req, res, connection);
    void handle(req, res).catch((err: unknown) => {
      logger().error({ err }, 'the Next.js request handler failed');
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('internal error (logged on the server)');
    });
  });
  logger().info(
    { maxConnections: limits.maxConnections, maxPerPeer: limits.maxPerPeer },
    'connection caps (REDLOCK_MAX_CONNECTIONS, REDLOCK_MAX_CONNECTIONS_PER_PEER)',
  );
  await new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen(port, host, () => {
      server.off('error', fail);
      done();
    });
  });
  server.on('error', (err) => logger().error({ err }, 'the console server failed'));

  // A stop lets the requests in flight finish (a force-release writes its audit entry after its
  // deletes), up to DRAIN_MS, writes the lock history still buffered, then closes Next.js and the
  // lock core's connections.
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    const closed = new Promise<void>((done) => server.close(() => done()));
    server.closeIdleConnections();
    lean?.closeIdle();
    void Promise.race([closed, new Promise((done) => setTimeout(done, DRAIN_MS).unref())])
      .then(async () => {
        server.closeAllConnections();
        lean?.closeAll();
        const flush = () => Promise.race([flushLockHistory(), new Promise((done) => setTimeout(done, FLUSH_AT_STOP_MS).unref())]);
        await flush();
        await app.close().catch(() => undefined);
        // Handlers cut off by the close may have recorded entries since: write those too.
        await flush();
        await lockCore()
          .quit()
          .catch(() => undefined);
      })
      .catch(() => undefined)
      .finally(() => process.exit(128 + (signal === 'SIGINT' ? 2 : 15)));
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
