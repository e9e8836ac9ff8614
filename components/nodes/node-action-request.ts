import type { NodeAction } from '@/lib/api/node-actions';
import type { ActionKind } from './actions';
import type { Persistence } from './restart-outcome';

/** What the action dialog's fields hold, as typed. */
export interface ActionFields {
  persistence: Persistence;
  /** Restart delay, in seconds. */
  delayS: string;
  latencyMs: string;
  jitterMs: string;
}

/**
 * The request a node action sends, from the dialog's fields: a start or restart carries the
 * persistence (a restart its delay, when not 0), latency its jitter when one is given. The API's
 * schema then decides whether it is valid.
 */
export function nodeActionRequest(kind: ActionKind, fields: ActionFields): NodeAction {
  const { persistence } = fields;
  const delay = Number(fields.delayS);
  const latency = Number(fields.latencyMs);
  const jitter = Number(fields.jitterMs);
  switch (kind) {
    case 'start':
      return { action: 'start', persistence };
    case 'restart':
      return delay !== 0 ? { action: 'restart', persistence, delayMs: Math.round(delay * 1000) } : { action: 'restart', persistence };
    case 'latency':
      return fields.jitterMs.trim() !== '' && jitter !== 0
        ? { action: 'latency', latencyMs: latency, jitterMs: jitter }
        : { action: 'latency', latencyMs: latency };
    default:
      return { action: kind } as NodeAction;
  }
}
