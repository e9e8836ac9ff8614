/**
 * The kinds of targeted trial (chaos/harness/targeted.ts), the defence the safe core owes in each, and
 * a trial's spec and result.
 */
import type { NemesisAction } from './history';
import type { EvictionPolicy } from './node-ops';
import type { CoreBuild } from './run-context';
import type { ClientSettings } from './worker-protocol';

export const TRIAL_KINDS = [
  'restart-rdb',
  'restart-stale-aof',
  'evict-volatile-lru',
  'evict-allkeys-random',
  'evict-flip',
  'short-max-ttl',
  'lose-data',
  'lose-majority',
  'fence-stall',
  'restart-rdb-late',
  'rollback-replicaof',
  'rollback-reload',
  'rollback-swapdb',
  'clock-jump',
] as const;
export type TrialKind = (typeof TRIAL_KINDS)[number];

/** What the safe core must be seen doing on the victim, per kind (the report's expectation). */
export const TRIAL_DEFENCES: Readonly<Record<TrialKind, string>> = {
  'restart-rdb': 'the victim refuses B, quarantined for its restart (cause restart)',
  'restart-stale-aof': 'the victim refuses B, quarantined for its restart (cause restart)',
  'evict-volatile-lru': 'the victim never votes for: unsafe-eviction (or quarantined)',
  'evict-allkeys-random': 'the victim never votes for: unsafe-eviction (or quarantined)',
  'evict-flip': 'the victim refuses B, quarantined for the keys it evicted (cause eviction)',
  'short-max-ttl': "the short client gets MaxTtlMismatchError; the victim refuses B, quarantined for the cluster's ceiling",
  'lose-data': 'the victim refuses B, quarantined for its data loss (cause data-loss)',
  'lose-majority':
    "B is refused while it reaches only the nodes that lost their data, then granted with a fence above A's (the lost registers reseeded from the others)",
  'fence-stall': 'A is refused (QuorumUnavailableError): its fence cannot be confirmed on a quorum',
  'restart-rdb-late':
    'the victim refuses B right after its restart and still at half the ceiling, quarantined for its restart (cause restart)',
  'rollback-replicaof': 'the victim refuses B, quarantined for its data going back (cause rollback, or replaced: a sync replaced its data)',
  'rollback-reload': 'the victim refuses B, quarantined for its data going back (cause rollback)',
  'rollback-swapdb': 'the victim refuses B, quarantined for its data going back (cause rollback)',
  'clock-jump': 'the victim refuses B, quarantined for its clock step (cause clock-jump)',
};

export interface TrialSpec {
  kind: TrialKind;
  /** Unique in the run: names the key prefix, the logs and the locks. */
  id: string;
  core: CoreBuild;
  seed: number;
  /** Settings of A, B and S over the profile's: `{ nodeChecks: false }` in the negative controls. */
  settings?: Partial<ClientSettings>;
  /** The victim (0-based); drawn from the seed when absent. */
  victim?: number;
  /** evict-flip: the policy switched there and back (drawn from the seed when absent). */
  policy?: EvictionPolicy;
  /**
   * rollback-swapdb: 'older-copy' or 'other-deployment'; clock-jump: 'forward' or 'backward'
   * (targeted-loss.ts; drawn from the seed when absent).
   */
  variant?: string;
  record(event: NemesisAction): void;
}

export interface TrialResult {
  kind: TrialKind;
  id: string;
  /** The trial's key prefix (its locks are under it). */
  prefix: string;
  /** Event logs of the trial's client sessions (JSONL), for the checkers. */
  logs: string[];
  victim: number;
  majority: number[];
  /** The danger was in place when B asked (see each kind): without it a trial proves nothing. */
  armed: boolean;
  /** What the core was seen doing on the victim, e.g. `quarantined (restart)`; null: nothing seen. */
  defence: string | null;
  /** The defence the safe core owes (TRIAL_DEFENCES) was seen. */
  defended: boolean;
  /** Short, for the phase's list of faults. */
  label: string;
  detail: string;
}
