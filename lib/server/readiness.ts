import 'server-only';
import { withTimeout } from '../inspect';
import { quorumSize } from '@redlock-console/redlock';
import { getRuntime } from './runtime';
import type { Readiness } from '../api/health';

export type { Readiness } from '../api/health';

/** How long one reading answers every request (a flood of /api/ready costs the masters one PING each per period). */
export const READINESS_CACHE_MS = 1_000;
const PING_TIMEOUT_MS = 1_000;

let cached: { at: number; value: Readiness } | null = null;
let inflight: Promise<Readiness> | null = null;

/**
 * Readiness for load balancers: a quorum of masters answers PING. One reading at a time, shared by
 * every request within READINESS_CACHE_MS of it: an anonymous flood of /api/ready must not take
 * the masters' time from the locks (it halved lock throughput when each request read every node).
 */
export function readiness(): Promise<Readiness> {
  if (cached !== null && performance.now() - cached.at < READINESS_CACHE_MS) return Promise.resolve(cached.value);
  inflight ??= read()
    .then((value) => {
      cached = { at: performance.now(), value };
      return value;
    })
    .finally(() => {
      inflight = null;
    });
  return inflight;
}

async function read(): Promise<Readiness> {
  const runtime = getRuntime();
  const nodes = runtime.endpoints.length;
  const quorum = nodes === 0 ? 0 : quorumSize(nodes);
  if (runtime.mode === 'unconfigured') return { ready: false, up: 0, quorum, nodes };
  const answers = await Promise.all(
    runtime.clients.map((c) =>
      withTimeout(c.ping(), PING_TIMEOUT_MS, 'PING').then(
        () => true,
        () => false,
      ),
    ),
  );
  const up = answers.filter(Boolean).length;
  return { ready: up >= quorum, up, quorum, nodes };
}
