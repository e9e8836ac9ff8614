import type { Step } from '../script';

/** Every run starts here (except where data loss is the point: then the narration says so). */
export function cleanStep(id = 'clean', order?: Extract<Step, { do: 'mark-clean' }>['order']): Step {
  return {
    id,
    do: 'mark-clean',
    title: 'A prefix of its own',
    ...(order ? { order } : {}),
    say: 'Setting up: on these masters the run keeps its locks under a key prefix of its own, so no other run\'s keys get in its way. The engine first leaves a small marker on every node saying "nothing lost here" for that prefix (the epoch sentinel) — true, nobody has used it. The lock core wants that marker before it trusts a node; scenario 3 shows why.',
  };
}

/** Right after nodes restart: a few quick retries, as any client would make (a first answer can be slow). */
export const AFTER_RESTART = { count: 3, delayMs: 150, jitterMs: 50 } as const;

export const OUTCOME_CHOICES = {
  granted: { id: 'granted', label: 'Granted' },
  // Plain words on the buttons (a glossary word cannot be explained inside a button); the error's
  // name comes with the explanation of what happened, where the glossary explains it.
  contended: { id: 'LockContendedError', label: 'Refused: someone holds it' },
  unavailable: { id: 'QuorumUnavailableError', label: 'Refused: too few nodes can vote' },
  expired: { id: 'LockExpiredError', label: 'Refused: no time would be left' },
  /** For `revealBy: 'granted'`: any refusal. */
  refused: { id: 'refused', label: 'Refused' },
} as const;
