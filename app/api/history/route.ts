import { z } from 'zod';
import { readHistory } from '@/lib/server/history';
import { route } from '@/lib/server/http/route';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

const querySchema = z.strictObject({ since: z.coerce.number().int().min(0).optional() });

/** The rolling window behind the overview's charts (one bucket per second, 10 minutes). */
export const GET = route({ permission: 'read', query: querySchema }, async ({ query }) => ({ buckets: readHistory(query.since) }));
