import 'server-only';
import type { AuditVia } from '../api/audit';
import type { ClusterControl } from '../scenarios';
import { recordAudit } from './audit';
import { snapshotOf } from './node-actions-service';

/**
 * The teaching sandbox's control channel as a scenario run uses it, with every node action it takes
 * (crash, restart, partition, latency…, and the heals and starts that put the cluster back at the
 * end) written to the audit log like an operator's: the actor is the user who ran the scenario,
 * `via` names the scenario and the run. The entry is written without being awaited: a scenario's
 * timing is part of its lesson, and an audit write to a node the step just crashed or slowed must
 * not hold the next step back. The state before is read first (one call on the local control
 * channel), as for an operator's action.
 */
export function auditedControl(control: ClusterControl, who: { actor: string; role: string }, via: () => AuditVia): ClusterControl {
  return {
    nodes: () => control.nodes(),
    async act(id, action) {
      const before = (await control.nodes().catch(() => [])).find((n) => n.id === id);
      const entry = {
        ...who,
        action: `node.${action.action}` as const,
        // The teaching sandbox's node, never to be read as the main master of the same number.
        target: `sandbox node ${id}`,
        before: before ? snapshotOf(before) : null,
        detail: JSON.stringify(action),
        via: via(),
      };
      try {
        const node = await control.act(id, action);
        void recordAudit({ ...entry, outcome: 'ok', after: snapshotOf(node) });
        return node;
      } catch (err) {
        void recordAudit({ ...entry, outcome: 'failed', detail: (err as Error).message });
        throw err;
      }
    },
  };
}
