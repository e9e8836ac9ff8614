import 'server-only';
import type { LiveEvent } from '../../api/events';
import { listNodes } from '../nodes-service';

/** node.up / node.down from a 1 s poll of every node, while someone listens. */
export function startNodeSource(emit: (event: LiveEvent) => void, intervalMs = 1_000): () => void {
  let last: boolean[] | null = null;
  let running = false;
  const tick = async () => {
    if (running) return;
    running = true;
    try {
      const { nodes } = await listNodes();
      const now = nodes.map((n) => n.up);
      if (last) {
        now.forEach((up, i) => {
          if (up !== last![i])
            emit({
              type: up ? 'node.up' : 'node.down',
              at: Date.now(),
              node: i + 1,
              source: 'polling',
              detail: nodes[i]?.error ?? undefined,
            });
        });
      }
      last = now;
    } catch {
      // the next tick tries again
    } finally {
      running = false;
    }
  };
  void tick();
  const timer = setInterval(() => void tick(), intervalMs);
  return () => clearInterval(timer);
}
