import 'server-only';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HealthResponse } from '../../api/health';
import { authenticate } from '../auth';
import { errorParts } from '../http/error-response';
import { notFound } from '../http/errors';
import { headerReader, sendJson } from '../http/node-io';
import { authorize } from '../http/request-checks';
import { metrics } from '../metrics';
import { refreshQuotaMetrics } from '../quotas';
import { readiness } from '../readiness';
import { LOCK_SERVICE_ROUTES } from './routes';

/**
 * What the lock-service process answers besides the three lock routes (lock-service/routes.ts), at
 * the console's paths so that one load-balancer check fits both programs:
 *
 *   GET /api/health    liveness: the process answers (200 while it drains too: it is alive)
 *   GET /api/ready     readiness: a quorum of masters answers PING and the process is not draining
 *                      (503 otherwise: a load balancer stops sending it new requests)
 *   GET /api/metrics   Prometheus text (the `metrics` permission, as the console's)
 *
 * (The lock routes themselves, mutex, semaphore and read-write lock: LOCK_SERVICE_ROUTES.)
 *
 * Anything else is 404 with a message naming the console: the inspection, force-release and every
 * other operator route is the control plane's, never answered here.
 */
export interface ServiceState {
  /** Set by the SIGTERM drain: readiness answers 503 from then on. */
  draining: boolean;
}

export function serveServiceRoute(req: IncomingMessage, res: ServerResponse, state: ServiceState): void {
  void answer(req, res, state).catch((err: unknown) => {
    const parts = errorParts(err);
    sendJson(req, res, parts.status, parts.body, parts.headers);
  });
}

async function answer(req: IncomingMessage, res: ServerResponse, state: ServiceState): Promise<void> {
  const path = (req.url ?? '/').split('?')[0] ?? '/';
  const get = req.method === 'GET' || req.method === 'HEAD';
  if (path === '/api/health' && get) {
    const body: HealthResponse = { ok: true, at: Date.now() };
    return sendJson(req, res, 200, body, { 'cache-control': 'no-store' });
  }
  if (path === '/api/ready' && get) {
    const reading = await readiness();
    const ready = reading.ready && !state.draining;
    return sendJson(
      req,
      res,
      ready ? 200 : 503,
      { ...reading, ready, ...(state.draining ? { draining: true } : {}) },
      { 'cache-control': 'no-store' },
    );
  }
  if (path === '/api/metrics' && get) {
    const principal = await authenticate({ headers: headerReader(req) });
    authorize(principal, 'metrics');
    refreshQuotaMetrics();
    const { registry } = metrics();
    const text = await registry.metrics();
    res.writeHead(200, { 'content-type': registry.contentType, 'cache-control': 'no-store', 'content-length': Buffer.byteLength(text) });
    return void res.end(req.method === 'HEAD' ? undefined : text);
  }
  throw notFound(
    `${req.method ?? ''} ${path.slice(0, 120)} is not a lock-service route: this process answers ` +
      `${LOCK_SERVICE_ROUTES.map((r) => `${r.method} ${r.pattern}`).join(', ')} and GET /api/health, /api/ready, /api/metrics; the console answers the rest`,
  );
}
