import 'server-only';
import type { LiveEvent } from '../../api/events';
import { lockKeyPrefix, lockPattern } from '@redlock-console/redlock';
import { getRuntime } from '../runtime';
import { atNode } from '../../node-number';

/**
 * Fallback where CONFIG is refused (managed Redis): read the lock keys of these nodes every
 * second and report what changed. Coarser than notifications (a grant and release inside one
 * interval are not seen), and said so by `source: 'polling'`.
 */
export function startLockPollingSource(nodes: number[], emit: (event: LiveEvent) => void, intervalMs = 1_000): () => void {
  const runtime = getRuntime();
  const pattern = lockPattern(runtime.keyPrefix);
  const lockPrefix = lockKeyPrefix(runtime.keyPrefix);
  let last = new Map<string, Set<number>>();
  let first = true;
  const tick = async () => {
    const now = new Map<string, Set<number>>();
    await Promise.all(
      nodes.map(async (node) => {
        const client = atNode(runtime.clients, node);
        if (!client) return;
        let cursor = '0';
        try {
          do {
            const [next, keys] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
            cursor = next;
            for (const key of keys) {
              const resource = key.slice(lockPrefix.length);
              if (!now.has(resource)) now.set(resource, new Set());
              now.get(resource)!.add(node);
            }
          } while (cursor !== '0');
        } catch {
          // node unreachable this round
        }
      }),
    );
    if (!first) {
      for (const [resource, on] of now)
        if (!last.has(resource)) emit({ type: 'lock.granted', at: Date.now(), resource, nodes: [...on], source: 'polling' });
      for (const [resource, on] of last)
        if (!now.has(resource)) emit({ type: 'lock.released', at: Date.now(), resource, nodes: [...on], source: 'polling' });
    }
    first = false;
    last = now;
  };
  const timer = setInterval(() => void tick(), intervalMs);
  void tick();
  return () => clearInterval(timer);
}
