import type { QuarantineCause } from './epoch';
import type { Lock } from './lock';
import type { RedlockError } from './errors';
import type { Vote } from './votes';

/** A command to one node failed (or its connection reported an error). */
export interface NodeErrorEvent {
  /** The node's number: its position in the list the Redlock was built with, counted from 1 (see votes.ts). */
  readonly node: number;
  readonly label: string;
  readonly error: Error;
}

/**
 * A node voted `quarantined`: it lost its data, restarted or evicted keys, and votes against until
 * `until` (node clock, ms).
 */
export interface QuarantineEvent {
  /** The node's number: its position in the list the Redlock was built with, counted from 1 (see votes.ts). */
  readonly node: number;
  readonly label: string;
  readonly until: number;
  /** True when this vote was the one that found the data loss and started the quarantine. */
  readonly discovered: boolean;
  /** Why, when the node's sentinel records it. */
  readonly cause?: QuarantineCause;
}

/** A lock can no longer be relied on: its keys are gone, an extension failed in using(), or it ran out of extensions. */
export interface LockLostEvent {
  readonly lock: Lock;
  readonly reason: Error;
}

/** Outcome of one acquire(), extend or release, for metrics and live event feeds. */
export interface OperationEvent {
  readonly resources: readonly string[];
  readonly ok: boolean;
  /** Wall time of the whole operation (all attempts and sleeps for an acquire), ms. */
  readonly durationMs: number;
  /** Votes of the deciding round (the last attempt for an acquire). */
  readonly votes: readonly Vote[];
  readonly fence: number | null;
  /** Attempts made (1 for extend and release). */
  readonly attempts: number;
  readonly error?: RedlockError;
}

/** The typed events of a Redlock (an EventEmitter). None is named 'error': no listener is required. */
export interface RedlockEvents {
  'node-error': [event: NodeErrorEvent];
  quarantine: [event: QuarantineEvent];
  'lock-lost': [event: LockLostEvent];
  acquire: [event: OperationEvent];
  extend: [event: OperationEvent];
  release: [event: OperationEvent];
}
