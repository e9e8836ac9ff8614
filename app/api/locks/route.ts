import { lockListQuerySchema } from '@/lib/api/locks';
import { actorOf } from '@/lib/server/auth/principal';
import { route } from '@/lib/server/http/route';
import { listLocks } from '@/lib/server/inspect-service';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

/**
 * The quorum view of every lock, paged with a stable cursor. With `pattern`, values of keys that
 * are not the console's locks are shown raw to operators only (viewers get fingerprints).
 */
export const GET = route({ permission: 'read', query: lockListQuerySchema }, ({ query, principal }) =>
  listLocks(
    query,
    principal.kind === 'session' && principal.role === 'operator' ? 'raw' : 'fingerprint',
    // Whose budget a full scan is spent from (lib/server/scan-budget.ts).
    `${principal.kind}:${actorOf(principal).actor}`,
  ),
);

// POST /api/locks (acquire), …/extend and …/release are the lock service's fast path: answered
// before Next.js by scripts/console-server.ts (lib/server/lock-service).
