/**
 * The check behind "nothing of a rejected attempt remains on a node that answered" (the core's
 * contract, this checker's). Right after acquire() rejects, read the lock key on every node the
 * error does not name in `cleanupPending`, over connections of our own (the same paths as the core's,
 * so a node the core cannot reach is not read either), and report the nodes where a key written by
 * this very acquire is still there. Each attempt of an acquire writes the caller's metadata, so the
 * acquire's id in it (`attempt`) tells its keys from everyone else's. A read that fails or times out
 * proves nothing and is counted as unread.
 */
import { Redis } from 'ioredis';
import { attemptOf } from '../harness/history';

export interface LeftoverReport {
  /** Nodes (0-based) that answered the attempt and still hold one of its keys. */
  leftovers: number[];
  /** Nodes that should have been read but could not be. */
  unread: number;
}

export class LeftoverReader {
  private readonly nodes: Redis[];

  constructor(urls: readonly string[]) {
    this.nodes = urls.map((url) => {
      const r = new Redis(url, {
        enableOfflineQueue: false,
        maxRetriesPerRequest: 0,
        commandTimeout: 250,
        lazyConnect: false,
        retryStrategy: () => 100,
      });
      r.on('error', () => undefined);
      return r;
    });
  }

  /** Read `key` on every node not in `pending` and name those where `attempt`'s value is still there. */
  async check(key: string, attempt: string, pending: readonly number[]): Promise<LeftoverReport> {
    const report: LeftoverReport = { leftovers: [], unread: 0 };
    await Promise.all(
      this.nodes.map(async (node, i) => {
        if (pending.includes(i)) return;
        try {
          const value = await node.get(key);
          if (value !== null && attemptOf(value) === attempt) report.leftovers.push(i);
        } catch {
          report.unread++;
        }
      }),
    );
    report.leftovers.sort((a, b) => a - b);
    return report;
  }

  close(): void {
    for (const node of this.nodes) node.disconnect();
  }
}

/**
 * The nodes a rejection names in cleanupPending (none when the error does not carry it, e.g.
 * InvalidArgumentError), as positions in the node list: the chaos logs index nodes like the arrays
 * they sit in (0-based), while the core numbers them from 1 (votes.ts). This is the one place the
 * harness converts.
 */
export function cleanupPendingOf(err: unknown): readonly number[] | null {
  const pending = (err as { cleanupPending?: unknown } | null)?.cleanupPending;
  return Array.isArray(pending) ? (pending as number[]).map((n) => n - 1) : null;
}
