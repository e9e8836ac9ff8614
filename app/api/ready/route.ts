import { listNodes } from '@/lib/server/nodes-service';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

/** Readiness: 200 when a quorum of masters answers, else 503 (for load balancers and orchestrators). */
export async function GET(): Promise<Response> {
  const nodes = await listNodes();
  const up = nodes.nodes.filter((n) => n.up).length;
  const ready = nodes.mode !== 'unconfigured' && up >= nodes.quorum;
  return Response.json({ ready, up, quorum: nodes.quorum, nodes: nodes.nodes.length }, { status: ready ? 200 : 503, headers: { 'cache-control': 'no-store' } });
}
