import { openApiDocument } from '@/lib/api/openapi';
import { route } from '@/lib/server/http/route';
import { getRuntime } from '@/lib/server/runtime';
import packageJson from '@/package.json';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

let document: Record<string, unknown> | null = null;

/**
 * The OpenAPI 3.1 document of every route (generated from lib/api once per process, `ttlMs`
 * bounded by this console's lease ceiling); public: it holds no data.
 */
export const GET = route(
  { permission: 'public' },
  async () => (document ??= openApiDocument({ version: packageJson.version, maxTtlMs: getRuntime().maxTtlMs })),
);
