import { bulkForceReleaseBodySchema } from '@/lib/api/locks';
import { forceReleaseMany } from '@/lib/server/force-release-many';
import { route } from '@/lib/server/http/route';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

/** Several force-releases, one reason: each item the compare-and-delete of the token the operator saw. */
export const POST = route({ permission: 'operate', body: bulkForceReleaseBodySchema }, ({ principal, body }) =>
  forceReleaseMany(principal, body),
);
