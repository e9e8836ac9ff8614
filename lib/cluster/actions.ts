import { z } from 'zod';
import { PERSISTENCE_MODES, type Persistence } from './persistence';

const ms = (max: number) => z.number().int('must be a whole number of milliseconds').min(0).max(max);

/**
 * What an operator can do to one local master. Process actions (crash, stop, start, restart, pause,
 * resume) act on the redis-server process; network actions (partition, heal, latency, reset) act on
 * the node's fault proxy, so every client of the console sees them.
 */
export const nodeActionSchema = z.discriminatedUnion('action', [
  z.strictObject({ action: z.literal('crash') }),
  z.strictObject({ action: z.literal('stop') }),
  z.strictObject({ action: z.literal('start'), persistence: z.enum(PERSISTENCE_MODES as [Persistence, ...Persistence[]]).optional() }),
  z.strictObject({
    action: z.literal('restart'),
    persistence: z.enum(PERSISTENCE_MODES as [Persistence, ...Persistence[]]).optional(),
    delayMs: ms(600_000).optional(),
  }),
  z.strictObject({ action: z.literal('pause') }),
  z.strictObject({ action: z.literal('resume') }),
  z.strictObject({ action: z.literal('partition') }),
  z.strictObject({ action: z.literal('heal') }),
  z.strictObject({ action: z.literal('reset') }),
  z.strictObject({ action: z.literal('latency'), latencyMs: ms(60_000), jitterMs: ms(60_000).optional() }),
]);

export type NodeAction = z.infer<typeof nodeActionSchema>;
export type NodeActionName = NodeAction['action'];
export const NODE_ACTION_NAMES = Object.freeze(nodeActionSchema.options.map((o) => o.shape.action.value)) as readonly NodeActionName[];
