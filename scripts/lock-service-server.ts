/**
 * The lock service's process (the data plane): acquire, extend and release over HTTP for programs
 * in any language, with its health, readiness and metrics (lib/server/lock-service/service.ts).
 * `npm start` runs one beside the console, which forwards the lock routes to it
 * (REDLOCK_LOCK_SERVICE_URL); docker-compose.yml runs two behind HAProxy. Stateless: every
 * replica works on the masters' state.
 *
 *   node --import tsx --import ./scripts/support/server-only-hook.mjs scripts/lock-service-server.ts
 *
 * The listening address comes from PORT and HOST (127.0.0.1 unless set). SIGTERM or SIGINT
 * drains: /api/ready answers 503 at once, the listener closes, the requests in flight are
 * answered (up to REDLOCK_DRAIN_MS, 3,500 ms by default), the lock history still buffered is
 * written, then the process exits.
 */
import { lockServiceConfig } from '../lib/config/lock-service';
import { connectionLimits } from '../lib/server/http/connection-limits';
import { quotaSettings } from '../lib/server/quotas/settings';
import { startLockService } from '../lib/server/lock-service/service';
import { logger } from '../lib/server/logger';
import { captureRootContext } from '../lib/server/root-context';

const host = process.env.HOST?.trim() || '127.0.0.1';

async function main(): Promise<void> {
  // Its own port is PORT (as the console's is): `npm start` passes REDLOCK_SERVICE_PORT as PORT.
  const port = lockServiceConfig({ REDLOCK_SERVICE_PORT: process.env.PORT }, 3_000).port;
  const { drainMs } = lockServiceConfig(process.env, 3_000);
  captureRootContext();
  quotaSettings(process.env.REDLOCK_API_KEY_QUOTAS); // a bad setting stops the start here, in one line
  const service = await startLockService({ port, host, limits: connectionLimits() });
  logger().info({ port: service.port, host }, 'the lock service is listening');
  const stop = (signal: NodeJS.Signals) => {
    logger().info({ signal, drainMs }, 'the lock service is draining');
    void service.stop(drainMs).finally(() => process.exit(128 + (signal === 'SIGINT' ? 2 : 15)));
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
