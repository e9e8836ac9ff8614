import { z } from 'zod';

export const auditEntrySchema = z.object({
  id: z.string(),
  at: z.number(),
  actor: z.string(),
  role: z.string(),
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
] as const;
