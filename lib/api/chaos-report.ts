/**
 * GET /api/chaos/report, and the file behind it: one JSON document per chaos run
 * (chaos/reports/latest.json by default). This zod
 * schema is the one contract between the runner that writes it and the console that shows it.
 */
import { z } from 'zod';

export const nemesisReportSchema = z.object({
  nemesis: z.string(),
  title: z.string(),
  /** How the clients reached the nodes: direct, node-proxies, client-links or skew. */
  network: z.string(),
  durationMs: z.number(),
  cycles: z.number().int(),
  /** A sample of the faults injected. */
  faults: z.array(z.string()),
  successes: z.number().int(),
  successesUnderFault: z.number().int(),
  fencedSuccesses: z.number().int(),
  unfencedSuccesses: z.number().int(),
  failures: z.number().int(),
  failuresByClass: z.record(z.string(), z.number().int()),
  overlaps: z.number().int(),
  /** Grant-order, register-order and duplicate-fence violations. */
  fenceViolations: z.number().int(),
  staleAcceptedFenced: z.number().int(),
  staleAcceptedUnfenced: z.number().int(),
  rejectedFenced: z.number().int(),
  leakedKeys: z.number().int(),
  foreignDeletes: z.number().int(),
  expiredGrants: z.number().int(),
  /** Extends accepted although invoked after the validity they extended had ended (reports before it: 0). */
  lateExtends: z.number().int().default(0),
  /**
   * The liveness verdict of a nemesis that keeps a quorum reachable (chaos/harness/liveness.ts), null
   * for the others (and in reports before it).
   */
  liveness: z
    .object({
      unavailable: z.number().int(),
      allowedUnavailable: z.number().int(),
      ratePerS: z.number(),
      floorPerS: z.number().nullable(),
      passed: z.boolean(),
    })
    .nullable()
    .default(null),
  /** Rejected acquires that left a key on a node that answered them (reports before it: 0). */
  leftovers: z.number().int().default(0),
  minValidityAtReturnMs: z.number().nullable(),
  p50Ms: z.number().nullable(),
  p99Ms: z.number().nullable(),
  commandsPerAcquisition: z.number().nullable(),
  scriptCallsPerAcquisition: z.number().nullable(),
  /** A node restarted during the phase, so its command counts start over: the cost is a lower bound. */
  costApproximate: z.boolean(),
  violations: z.number().int(),
  examples: z.array(z.string()),
  /** Fewer successful acquisitions than the profile's target. */
  shortfall: z.boolean(),
  /** Unhandled promise rejections in the client processes (a robustness finding, not a safety one). */
  clientErrors: z.number().int(),
  /**
   * Targeted nemeses: one trial per cycle creates the danger a node check exists for (the holder's
   * keys on a bare majority, one node of which loses data); in how many it was in place, and in how
   * many the safe core's defence (`expectation`) was seen. Absent in reports of older runs.
   */
  targeted: z
    .object({
      trials: z.number().int(),
      armed: z.number().int(),
      defended: z.number().int(),
      expectation: z.string(),
      examples: z.array(z.string()),
    })
    .nullable()
    .optional(),
  /**
   * The semaphores and read-write locks taken beside the locks (chaos/harness/check-slots.ts): grants
   * by kind, refusals, and what each of their checkers found (counted in `violations` too). Absent in
   * reports of older runs.
   */
  slots: z
    .object({
      permits: z.number().int(),
      reads: z.number().int(),
      writes: z.number().int(),
      failures: z.number().int(),
      failuresByClass: z.record(z.string(), z.number().int()),
      p50Ms: z.number().nullable(),
      p99Ms: z.number().nullable(),
      capacity: z.number().int(),
      rwExclusion: z.number().int(),
      slotOverlaps: z.number().int(),
      slotFenceViolations: z.number().int(),
      rejectedFenced: z.number().int(),
      hygiene: z.number().int(),
    })
    .nullable()
    .optional(),
  passed: z.boolean(),
});

export const controlReportSchema = z.object({
  name: z.string(),
  /** The nemesis whose situation the control reproduces (absent in reports of older runs). */
  nemesis: z.string().nullable().optional(),
  expectation: z.string(),
  negative: z.boolean(),
  trials: z.number().int(),
  found: z.number().int(),
  passed: z.boolean(),
  details: z.array(z.string()),
});

export const mutantAttemptSchema = z.object({
  nemesis: z.string(),
  violations: z.number().int(),
  checkers: z.array(z.string()),
  successes: z.number().int(),
  durationMs: z.number(),
  examples: z.array(z.string()),
});

export const mutantReportSchema = z.object({
  name: z.string(),
  description: z.string(),
  caught: z.boolean(),
  /** The nemesis and checkers that caught it. */
  caughtBy: z.object({ nemesis: z.string(), checkers: z.array(z.string()) }).nullable(),
  attempts: z.array(mutantAttemptSchema),
});

export const chaosReportSchema = z.object({
  version: z.literal(1),
  profile: z.enum(['ci', 'long']),
  seed: z.number().int(),
  startedAt: z.string(),
  durationMs: z.number(),
  host: z.object({ cpus: z.number().int(), loadAverage: z.array(z.number()), node: z.string(), redis: z.string() }),
  settings: z.object({
    nodes: z.number().int(),
    clients: z.number().int(),
    fencedClients: z.number().int(),
    loopsPerClient: z.number().int(),
    longLoopsPerClient: z.number().int(),
    ttlMs: z.number(),
    driftFactor: z.number(),
    nodeTimeoutMs: z.number(),
    targetPerNemesis: z.number().int(),
  }),
  nemeses: z.array(nemesisReportSchema),
  controls: z.array(controlReportSchema),
  mutants: z.array(mutantReportSchema),
  mutantScore: z.object({ caught: z.number().int(), total: z.number().int() }),
  verdict: z.object({ passed: z.boolean(), failures: z.array(z.string()), warnings: z.array(z.string()) }),
});

export type NemesisReport = z.infer<typeof nemesisReportSchema>;
export type ControlReport = z.infer<typeof controlReportSchema>;
export type MutantReport = z.infer<typeof mutantReportSchema>;
export type MutantAttempt = z.infer<typeof mutantAttemptSchema>;
export type ChaosReport = z.infer<typeof chaosReportSchema>;

/** GET /api/chaos/report: the latest report, where it was read from, and when it was written. */
export const chaosReportResponseSchema = z.object({
  report: chaosReportSchema,
  /** The file, relative to the console's working directory when inside it. */
  source: z.string(),
  /** mtime of the file, epoch ms. */
  modifiedAt: z.number(),
  /**
   * The report shipped with the console (the CI profile's run, chaos/reference/), shown while this
   * machine has none of its own; `reference.note` says which run it was and how to make one here.
   */
  reference: z.object({ note: z.string() }).nullable(),
});
export type ChaosReportResponse = z.infer<typeof chaosReportResponseSchema>;
