import type { Redis } from 'ioredis';
import { withTimeout } from './connection';
import type { LockGrouper } from './grouping';
import { metaKeyOf, parseMeta } from './meta';

const CHUNK = 1_000;

/**
 * Holder metadata is the same on every node that holds a lock, so the scan reads it on one node
 * per key (its "share"). Where that node does not hold the key, nobody read it: fetch it here from
 * a readable node that holds the key with its most common token, through that token
 * (`GET <metaPrefix><token>` on that node, so the metadata is the one of the token the view
 * shows), in pipelined chunks per node. A missing key or a non-string (WRONGTYPE) is "none".
 * Best effort: a node that fails leaves those keys without metadata. Returns how many got some.
 */
export async function fillMissingMeta(
  clients: readonly Redis[],
  grouper: LockGrouper,
  options: { readable: readonly boolean[]; metaPrefix: string; timeoutMs: number; signal?: AbortSignal },
): Promise<number> {
  const perNode: { group: number; token: string }[][] = clients.map(() => []);
  for (const { group, token, reading } of grouper.metaWanted(options.readable)) perNode[reading]!.push({ group, token });
  let filled = 0;
  await Promise.all(perNode.map(async (todo, reading) => {
    const client = clients[reading]!;
    for (let start = 0; start < todo.length; start += CHUNK) {
      const chunk = todo.slice(start, start + CHUNK);
      const pipeline = client.pipeline();
      for (const { token } of chunk) pipeline.get(metaKeyOf(options.metaPrefix, token));
      let replies: [Error | null, unknown][] | null;
      try {
        replies = await withTimeout(pipeline.exec(), options.timeoutMs, 'reading lock metadata', options.signal);
      } catch (err) {
        if (options.signal?.aborted) throw err;
        return;
      }
      chunk.forEach(({ group }, i) => {
        const [err, value] = replies?.[i] ?? [null, null];
        // WRONGTYPE (a leftover hash) reads as "no metadata", like a missing key.
        const meta = err ? null : parseMeta(value);
        grouper.setMeta(group, reading, meta);
        if (meta) filled++;
      });
    }
  }));
  return filled;
}
