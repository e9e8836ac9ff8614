import { z } from 'zod';
import { PERSISTENCE_MODES, type Persistence } from './persistence';
import { MAX_FAULT_DELAY_MS } from '../faults/modes';

/**
 * POST /api/nodes/{id}/actions, and the supervisor's control channel (the same body): what an
 * operator can do to one local master. Process actions (crash, stop, start, restart, pause,
 * resume) act on the redis-server process; network actions (partition, heal, latency, reset) act
 * on the node's fault proxy, so every client of the console sees them. The console's buttons, their
 * order and the limits of its inputs come from here.
 */

/** Bounds of the numeric fields, in milliseconds (the dialog's inputs use them too). */
export const NODE_ACTION_LIMITS = Object.freeze({
  delayMs: { min: 0, max: 600_000 },
  // A latency of 0 would be a heal under another name: heal says what it does.
  latencyMs: { min: 1, max: MAX_FAULT_DELAY_MS },
  jitterMs: { min: 0, max: MAX_FAULT_DELAY_MS },
});

const ms = (field: keyof typeof NODE_ACTION_LIMITS) =>
  z.number().int('must be a whole number of milliseconds').min(NODE_ACTION_LIMITS[field].min).max(NODE_ACTION_LIMITS[field].max);
const persistence = z.enum(PERSISTENCE_MODES as [Persistence, ...Persistence[]]);

export const nodeActionSchema = z.discriminatedUnion('action', [
  z.strictObject({ action: z.literal('crash') }),
  z.strictObject({ action: z.literal('stop') }),
  z.strictObject({ action: z.literal('start'), persistence: persistence.optional() }),
  z.strictObject({ action: z.literal('restart'), persistence: persistence.optional(), delayMs: ms('delayMs').optional() }),
  z.strictObject({ action: z.literal('pause') }),
  z.strictObject({ action: z.literal('resume') }),
  z.strictObject({ action: z.literal('partition') }),
  z.strictObject({ action: z.literal('heal') }),
  z.strictObject({ action: z.literal('reset') }),
  z.strictObject({ action: z.literal('latency'), latencyMs: ms('latencyMs'), jitterMs: ms('jitterMs').optional() }),
]);

export type NodeAction = z.infer<typeof nodeActionSchema>;
export type NodeActionName = NodeAction['action'];
export const NODE_ACTION_NAMES = Object.freeze(nodeActionSchema.options.map((o) => o.shape.action.value)) as readonly NodeActionName[];

/** Which actions touch the process and which the network, in the order the console shows them. */
export const NODE_ACTION_GROUPS = Object.freeze({
  process: ['crash', 'stop', 'start', 'restart', 'pause', 'resume'],
  network: ['partition', 'reset', 'latency', 'heal'],
} as const satisfies Record<'process' | 'network', readonly NodeActionName[]>);

/** What POST /api/nodes/{id}/actions answers: the supervisor's status of the node after the action. */
export const nodeActionResponseSchema = z.object({
  node: z
    .object({
      id: z.number().int(),
      state: z.string(),
      pid: z.number().nullable(),
      persistence: z.string(),
      restartAt: z.number().nullable(),
    })
    .loose(),
});
export type NodeActionResponse = z.infer<typeof nodeActionResponseSchema>;
