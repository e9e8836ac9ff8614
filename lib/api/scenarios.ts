import { VOTE_REASONS } from '@redlock-console/redlock/vocabulary';
import { z } from 'zod';

/**
 * Teaching scenarios: guided runs of real Redlock clients against the sandbox cluster,
 * with a timeline of what every node holds, what every client believes, and a mutual-exclusion
 * checker. Times in a run are milliseconds since the run started (the server's monotonic clock).
 */

export const SCENARIO_IDS = [
  'quorum',
  'minority-failure',
  'restart-without-persistence',
  'delayed-restart',
  'client-pause',
  'split-vote',
  'slow-network',
  'clock-drift',
  'restart-from-snapshot',
  'delayed-write',
  'efficiency-vs-correctness',
  'restored-from-backup',
  'semaphore-restart',
] as const;
export const scenarioIdSchema = z.enum(SCENARIO_IDS);
export type ScenarioId = z.infer<typeof scenarioIdSchema>;

/** Speed scales the pauses between steps and the scripted waits, never the leases (TTLs run in real time). */
export const SPEEDS = [0.5, 1, 2] as const;
export const speedSchema = z.union([z.literal(0.5), z.literal(1), z.literal(2)]);
export type Speed = z.infer<typeof speedSchema>;

export const seedSchema = z.number().int('must be a whole number').min(0).max(0xffff_ffff);

export const scenarioSummarySchema = z.object({
  id: scenarioIdSchema,
  number: z.number().int(),
  title: z.string(),
  summary: z.string(),
  /** What the viewer should take away. */
  lesson: z.string(),
  /** Rough length of a run at 1×, seconds, not counting the time spent on predictions. */
  estimatedSeconds: z.number(),
  /** Short tags: 'process faults', 'network', 'fencing'… */
  tags: z.array(z.string()),
});
export type ScenarioSummary = z.infer<typeof scenarioSummarySchema>;

export const runStatusSchema = z.enum(['running', 'paused', 'predict', 'restoring', 'done', 'failed', 'cancelled']);
export type RunStatus = z.infer<typeof runStatusSchema>;
export const ACTIVE_STATUSES: readonly RunStatus[] = ['running', 'paused', 'predict', 'restoring'];

export const scenarioListSchema = z.object({
  scenarios: z.array(scenarioSummarySchema),
  /** Can runs start here (a teaching sandbox: masters started for the scenarios, apart from the main ones)? */
  available: z.boolean(),
  /** Why not, when not. */
  problem: z.string().nullable(),
  /** Where runs run (the teaching sandbox's masters, and that the main ones are never touched); null when off. */
  where: z.string().nullable(),
  current: z.object({ runId: z.string(), scenarioId: scenarioIdSchema, status: runStatusSchema }).nullable(),
});
export type ScenarioList = z.infer<typeof scenarioListSchema>;

/** The id is checked by the service (404 for an unknown scenario). */
export const scenarioParamsSchema = z.strictObject({ id: z.string().min(1).max(64) });

export const startRunBodySchema = z.strictObject({
  seed: seedSchema.optional(),
  speed: speedSchema.optional(),
});
export type StartRunBody = z.infer<typeof startRunBodySchema>;

export const RUN_ACTIONS = ['play', 'pause', 'step', 'cancel', 'predict', 'speed', 'restart'] as const;
export const runActionSchema = z.enum(RUN_ACTIONS);
export type RunAction = z.infer<typeof runActionSchema>;
export const runActionParamsSchema = z.strictObject({ action: runActionSchema });

/** Body of POST /api/scenarios/runs/current/{action}: `choice` for predict (null = skip), `speed` for speed. */
export const runActionBodySchema = z.strictObject({
  choice: z.string().max(64).nullable().optional(),
  speed: speedSchema.optional(),
});
export type RunActionBody = z.infer<typeof runActionBodySchema>;

export const voteViewSchema = z.object({
  node: z.number().int(),
  vote: z.enum(['for', 'against']),
  reason: z.enum(VOTE_REASONS),
  detail: z.string().optional(),
});
export type ScenarioVote = z.infer<typeof voteViewSchema>;

export const OUTCOMES = ['granted', 'LockContendedError', 'QuorumUnavailableError', 'LockExpiredError', 'aborted', 'error'] as const;
export const outcomeSchema = z.enum(OUTCOMES);
export type Outcome = z.infer<typeof outcomeSchema>;

export const stepViewSchema = z.object({
  index: z.number().int(),
  /** Stable id from the script (e.g. 'b-refused'), used by tests and the UI. */
  id: z.string(),
  kind: z.string(),
  title: z.string(),
  say: z.string(),
  chained: z.boolean(),
  status: z.enum(['pending', 'active', 'done', 'failed', 'skipped']),
  startedAt: z.number().nullable(),
  endedAt: z.number().nullable(),
  /** One line on what happened (filled when the step ends). */
  result: z.string().nullable(),
});
export type StepView = z.infer<typeof stepViewSchema>;

export const predictionSchema = z.object({
  id: z.string(),
  question: z.string(),
  choices: z.array(z.object({ id: z.string(), label: z.string() })),
  /** The viewer's choice; null while unanswered or when skipped. */
  answer: z.string().nullable(),
  skipped: z.boolean(),
  answeredAt: z.number().nullable(),
  /** What really happened, once the revealing step has run. */
  actual: z.string().nullable(),
  explanation: z.string().nullable(),
});
export type Prediction = z.infer<typeof predictionSchema>;

export const nodeStateSchema = z.enum(['up', 'starting', 'stopping', 'down', 'paused', 'partitioned', 'slow', 'reset', 'unknown']);
export type NodeLaneState = z.infer<typeof nodeStateSchema>;

export const timelineSchema = z.object({
  /** Where time stands now (ms since the start); frozen when the script ended. */
  now: z.number(),
  nodeStates: z.array(
    z.object({ node: z.number().int(), from: z.number(), to: z.number().nullable(), state: nodeStateSchema, detail: z.string() }),
  ),
  /** What each node held: a key of `resource` with `client`'s token, seen from `from` to `to`, expiring at `expiresAt`. */
  keys: z.array(
    z.object({
      node: z.number().int(),
      resource: z.string(),
      client: z.string(),
      from: z.number(),
      to: z.number(),
      expiresAt: z.number(),
      open: z.boolean(),
    }),
  ),
  /** Moments on a node lane or a client lane: actions, drift steps, pauses. */
  markers: z.array(
    z.object({
      t: z.number(),
      node: z.number().int().nullable(),
      client: z.string().nullable(),
      kind: z.string(),
      label: z.string(),
    }),
  ),
  /**
   * When a node sat out a quarantine of the run's prefix (its epoch sentinel, read with its keys):
   * from the first reading that showed it to its end (run time), and why the lock core started it.
   */
  quarantines: z.array(z.object({ node: z.number().int(), from: z.number(), to: z.number(), cause: z.string(), open: z.boolean() })),
  /** Each node's fence register for the run's prefix as it moved: the first value read, then every change (0: none). */
  fences: z.array(z.object({ node: z.number().int(), at: z.number(), value: z.number() })),
  /** When each client BELIEVED it held the lock: from the grant to the release, or to its validity end (or later, if paused). */
  beliefs: z.array(
    z.object({
      client: z.string(),
      resource: z.string(),
      from: z.number(),
      validUntil: z.number(),
      to: z.number().nullable(),
      fence: z.number().nullable(),
      stale: z.boolean(),
      ended: z.enum(['open', 'released', 'expired', 'abandoned']),
    }),
  ),
  /** Every acquire call: from its start to its answer, with the deciding round's votes. */
  attempts: z.array(
    z.object({
      id: z.string(),
      client: z.string(),
      resource: z.string(),
      from: z.number(),
      to: z.number().nullable(),
      outcome: outcomeSchema.nullable(),
      votes: z.array(voteViewSchema),
      validityMs: z.number().nullable(),
      fence: z.number().nullable(),
      tries: z.number().int(),
      message: z.string().nullable(),
    }),
  ),
  writes: z.array(
    z.object({
      t: z.number(),
      client: z.string(),
      resource: z.string(),
      fence: z.number().nullable(),
      value: z.string(),
      unfenced: z.literal('accepted'),
      fenced: z.enum(['accepted', 'rejected']),
      reason: z.string(),
    }),
  ),
});
export type TimelineView = z.infer<typeof timelineSchema>;

export const overlapSchema = z.object({
  resource: z.string(),
  /** Two clients for a lock; for a semaphore, the `limit` + 1 or more that believed at once. */
  clients: z.array(z.string()).min(2),
  from: z.number(),
  to: z.number(),
  /** Still going on now. */
  open: z.boolean(),
  /** Both clients were inside their validity during (part of) the overlap: Redlock's own guarantee broke. */
  bothValid: z.boolean(),
});
export type Overlap = z.infer<typeof overlapSchema>;

export const checkerSchema = z.object({
  ok: z.boolean(),
  resources: z.array(
    z.object({
      resource: z.string(),
      ok: z.boolean(),
      holders: z.number().int(),
      /** Holders allowed at once: 1 for a lock, the number of permits for a semaphore. */
      limit: z.number().int().optional(),
      overlaps: z.array(overlapSchema),
    }),
  ),
});
export type CheckerView = z.infer<typeof checkerSchema>;

export const storeSchema = z.object({
  value: z.string().nullable(),
  /** Fenced store only: the highest fence accepted so far. */
  highest: z.number().nullable(),
  accepted: z.number().int(),
  rejected: z.number().int(),
});

export const runViewSchema = z.object({
  runId: z.string(),
  scenarioId: scenarioIdSchema,
  number: z.number().int(),
  title: z.string(),
  lesson: z.string(),
  seed: z.number().int(),
  speed: speedSchema,
  /** Key prefix of this run's locks (a prefix of its own: `rl:demo:<runId>:`). */
  prefix: z.string(),
  status: runStatusSchema,
  /** Waiting for a play/step (paused), or running freely. */
  mode: z.enum(['play', 'paused']),
  startedBy: z.string(),
  startedAt: z.number(),
  finishedAt: z.number().nullable(),
  stepIndex: z.number().int(),
  steps: z.array(stepViewSchema),
  predictions: z.array(predictionSchema),
  /** The prediction waiting for an answer, when status is 'predict'. */
  pendingPrediction: z.string().nullable(),
  /** `unsafe`: the client runs with a safety check switched off; `unsafeSetting` names it ('quarantine off'). */
  clients: z.array(z.object({ name: z.string(), description: z.string(), unsafe: z.boolean(), unsafeSetting: z.string().nullable() })),
  nodes: z.array(z.object({ id: z.number().int(), label: z.string() })),
  /** Where the run runs, as its first step says it (the teaching sandbox's masters); null in a bare engine run. */
  where: z.string().nullable(),
  /**
   * `limit`: a semaphore of that many permits (the checker allows that many holders at once), and
   * `slots` the names its slots' keys carry on the timeline (`timeline.keys[].resource`), slot i at
   * index i; both absent for a lock.
   */
  resources: z.array(
    z.object({ name: z.string(), description: z.string(), limit: z.number().int().optional(), slots: z.array(z.string()).optional() }),
  ),
  quorum: z.number().int(),
  ttlMs: z.number().int(),
  maxTtlMs: z.number().int(),
  timeline: timelineSchema,
  checker: checkerSchema,
  stores: z.object({ unfenced: storeSchema, fenced: storeSchema }),
  /** Measured facts of the run (e.g. outages), for the result card. */
  facts: z.array(z.object({ id: z.string(), label: z.string(), value: z.string() })),
  log: z.array(z.object({ t: z.number(), text: z.string(), tone: z.enum(['info', 'ok', 'warn', 'bad', 'muted']) })),
  /** What the run said it simulates (honest list). */
  simulated: z.array(z.string()),
  restore: z
    .object({ done: z.boolean(), actions: z.array(z.string()), keysDeleted: z.number().int(), error: z.string().nullable() })
    .nullable(),
  error: z.string().nullable(),
});
export type RunView = z.infer<typeof runViewSchema>;

export const runResponseSchema = z.object({ run: runViewSchema.nullable() });
export type RunResponse = z.infer<typeof runResponseSchema>;
