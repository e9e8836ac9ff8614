import { z } from 'zod';
import { NODE_ACTION_NAMES } from './node-actions';

/**
 * Every action the audit log records, by family (the part before the dot): the one list. The
 * server writes only these (lib/server's recordAudit takes an AuditAction), the API's `action`
 * filter accepts only these and their families (so the OpenAPI document lists them), and the
 * Audit screen's action filter offers every one of them. A node action a scenario takes is the
 * same `node.*` action, marked with `via`.
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
type FamilyOf<A extends string> = A extends `${infer F}.${string}` ? F : A;
export type AuditFamily = FamilyOf<AuditAction>;
/** The families an action filter may name alone (`node` matches every `node.*`). */
export const AUDIT_FAMILIES = Object.freeze([...new Set(AUDIT_ACTIONS.map((a) => a.split('.')[0] as AuditFamily))]);
/** What the `action` filter accepts: a family or one action. */
export const AUDIT_ACTION_FILTERS: readonly string[] = Object.freeze([...new Set<string>([...AUDIT_FAMILIES, ...AUDIT_ACTIONS])]);

/**
 * The outcome of an entry written ahead of a destructive action (a force-release) whose end was
 * never recorded: the console stopped during it (or it is still running). The Audit screen marks it.
 */
export const AUDIT_INCOMPLETE = 'incomplete';
export const AUDIT_INCOMPLETE_HINT =
  'Recorded before the action began; its end was never recorded (the console stopped during it, or it is still running). Check the target as it is now.';

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
  /** A family (`node`: every `node.*`) or one action; every one of AUDIT_ACTIONS. */
  action: z.enum(AUDIT_ACTION_FILTERS as unknown as [string, ...string[]]).optional(),
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
