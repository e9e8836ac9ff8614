import type { HealthResponse } from '@/lib/api/health';
export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

/** Liveness: the server process answers. Readiness (a quorum is reachable) is /api/ready. */
export function GET(): Response {
  const body: HealthResponse = { ok: true, at: Date.now() };
  return Response.json(body);
}
