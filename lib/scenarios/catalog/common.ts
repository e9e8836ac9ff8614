import type { Step } from '../script';

/** Every run starts here (except where data loss is the point: then the narration says so). */
export function cleanStep(id = 'clean', order?: Extract<Step, { do: 'mark-clean' }>['order']): Step {
  return {
    id,
    do: 'mark-clean',
    title: 'A prefix of its own',
    ...(order ? { order } : {}),
    say: 'This run keeps its locks under a key prefix of its own. A prefix nobody has used has no epoch sentinel on any node, which the lock core reads as "this node lost its data": every node would quarantine it. So the engine first marks the nodes clean for this prefix — true, they hold nothing under it.',
  };
}

/** Right after nodes restart: a few quick retries, as any client would make (a first answer can be slow). */
export const AFTER_RESTART = { count: 3, delayMs: 150, jitterMs: 50 } as const;

export const OUTCOME_CHOICES = {
  granted: { id: 'granted', label: 'Granted' },
  contended: { id: 'LockContendedError', label: 'Refused: someone holds it (LockContended)' },
  unavailable: { id: 'QuorumUnavailableError', label: 'Refused: too few nodes can vote (QuorumUnavailable)' },
  expired: { id: 'LockExpiredError', label: 'Refused: validity ran out (LockExpired)' },
  /** For `revealBy: 'granted'`: any refusal. */
  refused: { id: 'refused', label: 'Refused' },
} as const;
