import 'server-only';
import type { LiveEvent } from '../../api/events';
import { listNodes } from '../nodes-service';
import { NodeTransitions } from './node-transitions';

/** node.up / node.down from a 1 s poll of every node, while someone listens. */
export function startNodeSource(emit: (event: LiveEvent) => void, intervalMs = 1_000): () => void {
  const transitions = new NodeTransitions();
  let running = false;
  const tick = async () => {
    if (running) return;
    running = true;
    try {
      const { nodes } = await listNodes();
      for (const change of transitions.observe(nodes)) {
        emit({ type: change.up ? 'node.up' : 'node.down', at: Date.now(), node: change.node, source: 'polling', detail: change.detail });
      }
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
