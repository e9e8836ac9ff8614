import { z } from 'zod';
import { NODE_ACTION_NAMES } from './node-actions';

/**
 * Every action the audit log records, by family (the part before the dot): what the server writes
 * (lib/server's recordAudit takes only these) and what the Audit screen offers as filters.
 */
export const AUDIT_ACTIONS = Object.freeze([
  ...NODE_ACTION_NAMES.map((a) => `node.${a}` as const),
  'node.mark-clean',
  'node.continuity',
  'lock.force-release',
  'login',
  'login.failed',
  'logout',
  'logout.everywhere',
  'scenario.run',
] as const);
export type AuditAction = (typeof AUDIT_ACTIONS)[number];
/** The families an action filter may name alone (`node` matches every `node.*`). */
export const AUDIT_FAMILIES = Object.freeze([...new Set(AUDIT_ACTIONS.map((a) => a.split('.')[0]!))]);

/** What a force-release entry names as the holder it hit when the lock carried no metadata and the lock history has no grant for its token. */
export const UNKNOWN_HOLDER = 'unknown holder (no metadata)';

/** An action a teaching scenario took on the user's behalf: which scenario, which run. */
export const auditViaSchema = z.object({ scenario: z.number().int(), scenarioId: z.string(), runId: z.string() });
export type AuditVia = z.infer<typeof auditViaSchema>;

export const auditEntrySchema = z.object({
  id: z.string(),
  at: z.number(),
  actor: z.string(),
  role: z.string(),
  /** One of AUDIT_ACTIONS (read as any string: entries written by other versions stay readable). */
  action: z.string(),
  target: z.string(),
  reason: z.string(),
  outcome: z.string(),
  /** Per-node state before and after the action (JSON), when the action changes nodes. */
  before: z.unknown().nullable(),
  after: z.unknown().nullable(),
  detail: z.string(),
  /** Aggregated entries (failed logins per address + username + window): how many attempts it stands for. */
  count: z.number().int().optional(),
  /**
   * Lock actions: whose lock it was, as read before the action (`principal=… owner=… host=…` from
   * the lock's metadata or its grant in the lock history), or UNKNOWN_HOLDER.
   */
  holder: z.string().optional(),
  /** Actions a scenario run took (the actor is who ran it): the scenario and the run. */
  via: auditViaSchema.optional(),
});
export type AuditEntry = z.infer<typeof auditEntrySchema>;

export const auditQuerySchema = z.strictObject({
  actor: z.string().max(128).optional(),
  action: z.string().max(64).optional(),
  since: z.coerce.number().int().min(0).optional(),
  limit: z.coerce.number().int().min(1).max(5_000).default(500),
  format: z.enum(['json', 'csv']).default('json'),
});

export const auditResponseSchema = z.object({
  entries: z.array(auditEntrySchema),
  /** Nodes the log was read from, and nodes that did not answer. */
  nodesRead: z.number().int(),
  nodesFailed: z.number().int(),
});
export type AuditResponse = z.infer<typeof auditResponseSchema>;

export const AUDIT_CSV_COLUMNS = [
  'id',
  'at',
  'actor',
  'role',
  'action',
  'target',
  'reason',
  'outcome',
  'before',
  'after',
  'detail',
  'holder',
  'via',
] as const;
