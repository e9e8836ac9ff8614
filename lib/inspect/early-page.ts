import type { Redis } from 'ioredis';
import { clampPageLimit, pageLocks, type LockPage, type PageQuery } from './page';
import type { QuorumOptions } from './quorum-view';
import { readLocks, type ReadNode } from './read-keys';
import type { SnapshotRun } from './snapshot';

/**
 * The first page of a lock list while its scan is still running. A full scan of a large keyspace
 * takes seconds; a first page should not. So: take the first locks (by resource) the scan has
 * found so far, read exactly those keys directly on every node, and classify what the nodes say
 * now. Every row is then exact (all nodes' cells, not only those the scan had reached), but the
 * page is not: locks the scan has not reached yet may sort before them, so the page has no next
 * cursor and its counts cover what was found so far.
 */

/** Options of earlyPage(): our key prefix, quorum settings, a per-node timeout for the direct reads. */
export interface EarlyPageOptions extends Partial<QuorumOptions> {
  keyPrefix: string;
  /** Per node, for the direct reads of the page's keys. @default 250 */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** An early page: the exact views of the first locks found so far, and how far the scan is. */
export interface EarlyPage extends LockPage {
  /** Local clock (ms) when the page's keys were read. */
  readAt: number;
  /** Milliseconds the scan had been running when the page's keys were picked. */
  scanMs: number;
  /** Distinct keys found so far per node; the page's direct read of each node. */
  nodes: (ReadNode & { keys: number })[];
  /** Distinct lock keys the scan has found so far (all nodes). */
  found: number;
  /** Keys found so far, summed over the nodes (one key on five nodes counts five). */
  scannedKeys: number;
}

/** Direct reads of an early page wait this long per node: a node that does not answer is unknown. */
export const EARLY_READ_TIMEOUT_MS = 250;

/** When a progressive first page stops waiting for its snapshot (see earlyPageDue). */
export interface EarlyPageTimings {
  /** Checks the run this often. @default 50 */
  stepMs?: number;
  /** A run that only catches up (the live index) is waited for this long from its start. @default 200 */
  catchUpMs?: number;
  /** A run that has found no lock yet is waited for this long from its start. @default 1000 */
  emptyMs?: number;
}

/**
 * Wait for `run` while a complete page is worth waiting for; resolves true when an early page
 * should answer instead, false once the run has ended. A scan of a node in full that has not ended
 * after a step has seconds to go: early page. A snapshot of the live index that only catches up
 * with what changed ends in about 100 ms with a complete page: waited for up to `catchUpMs`, after
 * which something holds it up (a paused or unreachable node): early page. An early page of a run
 * that has found nothing yet would be an empty table while locks exist: it waits for the first
 * lock found, up to `emptyMs` (then the page says so: still scanning, nothing found yet). Rejects
 * only when the run does.
 */
export async function earlyPageDue(run: SnapshotRun, timings: EarlyPageTimings = {}): Promise<boolean> {
  const stepMs = timings.stepMs ?? 50;
  const catchUpMs = timings.catchUpMs ?? 200;
  const emptyMs = timings.emptyMs ?? 1_000;
  while (!run.finished()) {
    if ((await within(run.done, stepMs)) !== null) return false;
    const elapsed = run.elapsedMs();
    if ((run.scanning() || elapsed >= catchUpMs) && (run.found() > 0 || elapsed >= emptyMs)) return !run.finished();
  }
  return false;
}

/** `promise`'s value, or null once `ms` have passed first. */
function within<T>(promise: Promise<T>, ms: number): Promise<T | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/**
 * The first page of `query` (no cursor) from what `run` has found so far, each row read directly
 * on every node. Candidates are picked by resource prefix and, when searching, by resource or
 * key text (holder metadata is not known for every key yet); state and search filters then apply
 * to the exact views, so a filtered early page may hold fewer rows than there are. `matched`
 * counts the candidates found so far (or the rows, with a state filter).
 */
export async function earlyPage(
  clients: readonly Redis[],
  run: SnapshotRun,
  query: Omit<PageQuery, 'cursor'>,
  options: EarlyPageOptions,
): Promise<EarlyPage> {
  const limit = clampPageLimit(query.limit);
  const prefix = query.prefix ?? '';
  const needle = query.search?.trim().toLowerCase() || null;
  const accept = (resource: string, key: string) =>
    resource.startsWith(prefix) && (needle === null || resource.toLowerCase().includes(needle) || key.toLowerCase().includes(needle));
  const scanMs = run.elapsedMs();
  const keysPerNode = run.keysPerNode();
  const { keys, accepted } = run.firstKeys(limit, accept);
  const readAt = Date.now();
  const { views, nodes } = await readLocks(clients, keys, {
    keyPrefix: options.keyPrefix,
    configuredNodes: options.configuredNodes,
    driftFactor: options.driftFactor,
    expiringThresholdMs: options.expiringThresholdMs,
    maxTtlMs: options.maxTtlMs,
    timeoutMs: options.timeoutMs ?? EARLY_READ_TIMEOUT_MS,
    signal: options.signal,
  });
  const page = pageLocks({ locks: views }, { prefix: query.prefix, state: query.state, search: query.search, limit });
  return {
    items: page.items,
    nextCursor: null,
    matched: query.state === undefined ? Math.max(page.items.length, accepted) : page.items.length,
    readAt,
    scanMs,
    nodes: nodes.map((n, i) => ({ ...n, keys: keysPerNode[i] ?? 0 })),
    found: run.found(),
    scannedKeys: keysPerNode.reduce((a, b) => a + b, 0),
  };
}
