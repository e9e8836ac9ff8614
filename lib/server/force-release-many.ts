import 'server-only';
import { randomUUID } from 'node:crypto';
import type { BulkForceReleaseBody, BulkForceReleaseResponse, ForceReleaseResponse } from '../api/locks';
import type { Principal } from './auth/principal';
import { conflict } from './http/errors';
import { forceRelease } from './force-release';

/** How many locks are released at once: enough to clear a batch quickly, few enough not to flood the masters. */
const CONCURRENCY = 8;

/**
 * Force-release several locks with one reason (POST /api/force-release). Each item goes through
 * the single force-release, so each is the compare-and-delete of the token the operator saw on
 * that resource, on every node: a lock that changed hands since the preview is left alone, and
 * the safety argument of forceRelease holds item by item (items never touch each other's keys,
 * and an item for a second token of a split lock deletes only that token's keys). Every real item
 * is audited on its own, naming the batch and its place in it.
 */
export async function forceReleaseMany(principal: Principal, body: BulkForceReleaseBody): Promise<BulkForceReleaseResponse> {
  const dryRun = body.dryRun === true;
  const batchId = dryRun ? null : randomUUID();
  // Live holders first: a batch that would hit one, without the operator's word that it
  // saw them, is refused whole before any delete, never stopped halfway.
  if (!dryRun && body.confirmLiveHolders !== true) {
    const preview = await forceReleaseMany(principal, { ...body, dryRun: true });
    const live = preview.results.filter((r) => r.liveness?.pulse === 'alive' && r.nodes.some((n) => n.outcome === 'would-delete'));
    if (live.length > 0)
      throw conflict(
        `${live.length} of these locks ${live.length === 1 ? 'has a live holder' : 'have live holders'} (${live
          .slice(0, 5)
          .map((r) => r.resource)
          .join(', ')}${live.length > 5 ? ', …' : ''}): send confirmLiveHolders: true to release them anyway`,
        { live: live.map((r) => ({ resource: r.resource, liveness: r.liveness })) },
      );
  }
  const results: ForceReleaseResponse[] = new Array(body.locks.length);
  let next = 0;
  const worker = async () => {
    while (next < body.locks.length) {
      const i = next++;
      const item = body.locks[i]!;
      results[i] = await forceRelease(principal, item.resource, {
        token: item.token,
        reason: body.reason,
        dryRun,
        confirmLiveHolder: true, // checked for the whole batch above
        ...(batchId ? { batch: `bulk ${batchId}, ${i + 1} of ${body.locks.length}` } : {}),
      });
    }
  };
  // Every worker runs to its end before the answer goes out: nothing is deleted after it. An item
  // that throws stops its worker's further items and fails the request (500, the other items'
  // entries are in the audit log); the schema refuses what the core would refuse, so this is a
  // fault of the masters or the console, never of the input.
  const settled = await Promise.allSettled(Array.from({ length: Math.min(CONCURRENCY, body.locks.length) }, worker));
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) throw failed.reason;
  return { dryRun, batchId, deleted: results.reduce((sum, r) => sum + r.deleted, 0), results };
}
