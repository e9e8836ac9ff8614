import type { Redis } from 'ioredis';
import { withTimeout } from './connection';
import type { LockGrouper } from './grouping';
import { splitLockValue } from './meta';

const CHUNK = 1_000;

/**
 * Holder metadata is the same on every node that holds a lock, so the scan ships it from one node
 * per key (its "share"). Where that node does not hold the key, nobody sent it: fetch it here from
 * a readable node that holds the key with its most common token, by reading the LOCK key there
 * again (`GET <lock key>`: its value is `<token> <metadata JSON>`, see meta.ts), in pipelined
 * chunks per node. The metadata is taken only when the value still holds the token the view
 * shows (the lock may have changed hands since the scan); a bare token, bad JSON or a
 * non-string (WRONGTYPE) is "none". Best effort: a node that fails leaves those keys without
 * metadata. Returns how many got some.
 */
export async function fillMissingMeta(
  clients: readonly Redis[],
  grouper: LockGrouper,
  options: { readable: readonly boolean[]; timeoutMs: number; signal?: AbortSignal },
): Promise<number> {
  const perNode: { group: number; key: string; token: string }[][] = clients.map(() => []);
  for (const { group, key, token, reading } of grouper.metaWanted(options.readable)) perNode[reading]!.push({ group, key, token });
  let filled = 0;
  await Promise.all(
    perNode.map(async (todo, reading) => {
      const client = clients[reading]!;
      for (let start = 0; start < todo.length; start += CHUNK) {
        const chunk = todo.slice(start, start + CHUNK);
        const pipeline = client.pipeline();
        for (const { key } of chunk) pipeline.get(key);
        let replies: [Error | null, unknown][] | null;
        try {
          replies = await withTimeout(pipeline.exec(), options.timeoutMs, 'reading lock metadata', options.signal);
        } catch (err) {
          if (options.signal?.aborted) throw err;
          return;
        }
        chunk.forEach(({ group, token }, i) => {
          const [err, value] = replies?.[i] ?? [null, null];
          // Gone, no longer a string, or another holder's value now: nothing to say about this token.
          if (err || typeof value !== 'string') return;
          const split = splitLockValue(value);
          if (split.token !== token) return;
          grouper.setMeta(group, reading, split.meta);
          if (split.meta) filled++;
        });
      }
    }),
  );
  return filled;
}
