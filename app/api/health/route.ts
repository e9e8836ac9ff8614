export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

/** Liveness: the server process answers. Readiness (a quorum is reachable) is /api/ready. */
export function GET(): Response {
  return Response.json({ ok: true, at: Date.now() });
}
