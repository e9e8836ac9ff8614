import { listNodes } from '@/lib/server/nodes-service';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

export async function GET(): Promise<Response> {
  return Response.json(await listNodes(), { headers: { 'cache-control': 'no-store' } });
}
