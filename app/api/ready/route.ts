import { readiness } from '@/lib/server/readiness';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

/** Readiness: 200 when a quorum of masters answers, else 503 (for load balancers and orchestrators); read at most once a second. */
export async function GET(): Promise<Response> {
  const r = await readiness();
  return Response.json(r, { status: r.ready ? 200 : 503, headers: { 'cache-control': 'no-store' } });
}
