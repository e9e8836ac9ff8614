import type { ScenarioDefinition } from '../script';
import { cleanStep, OUTCOME_CHOICES as O } from './common';

const R = 'ledger';
const TTL = 5_000;

export const quorumScenario: ScenarioDefinition = {
  id: 'quorum',
  number: 1,
  title: 'Quorum',
  summary: 'A takes the lock on all five nodes; B is refused; A releases and the release wakes B, who wins.',
  lesson:
    "A lock needs a majority (3 of 5) of independent nodes. Any two majorities share a node, so two clients cannot both win — while that shared node keeps A's key; scenarios 3, 8 and 9 break exactly that.",
  estimatedSeconds: 6,
  tags: ['basics', 'wake-up on release'],
  build: () => ({
    clients: [
      { name: 'A', description: 'a worker that wants the ledger' },
      { name: 'B', description: 'a second worker that wants the same ledger' },
    ],
    resources: [{ name: R, description: 'the resource both clients want' }],
    maxTtlMs: TTL,
    ttlMs: TTL,
    simulated: [],
    steps: [
      cleanStep(),
      {
        id: 'p-contended',
        do: 'predict',
        title: 'Predict: B asks while A holds',
        say: 'Two workers want the same ledger.',
        question: 'A is about to take the ledger on all five nodes. Right after, B asks for it without waiting. What happens to B?',
        choices: [O.granted, O.contended, O.unavailable],
      },
      {
        id: 'a-acquires',
        do: 'acquire',
        who: 'A',
        resource: R,
        ttlMs: TTL,
        chain: true,
        title: 'A asks every node',
        say: 'A asks all five nodes at once for the ledger (TTL 5 s). A node sets the key only if it is free; A needs a majority, 3 of 5.',
      },
      {
        id: 'b-refused',
        do: 'acquire',
        who: 'B',
        resource: R,
        ttlMs: TTL,
        reveals: 'p-contended',
        chain: true,
        title: 'B asks once',
        say: 'B asks all five nodes, once.',
        explain: {
          LockContendedError:
            "Every node already holds A's key. As soon as 3 of them have answered 'held' (contended), no majority is left for B, so B stops waiting: the other 2 answers are 'not awaited' — they could not change the outcome.",
        },
      },
      {
        id: 'b-waits',
        do: 'acquire',
        who: 'B',
        resource: R,
        ttlMs: TTL,
        background: true,
        retry: { count: 10, delayMs: 1_500, jitterMs: 100 },
        chain: true,
        title: 'B asks and waits',
        say: 'B asks again, ready to wait this time: it retries every ~1.5 s and listens for release notices from the nodes.',
      },
      {
        id: 'a-writes',
        do: 'write',
        who: 'A',
        resource: R,
        value: 'A: row 1',
        title: 'A works, then releases',
        say: 'A works on the ledger, then releases: a compare-and-delete of its own token on every node, after which each node publishes a release notice.',
      },
      { id: 'a-releases', do: 'release', who: 'A', resource: R, mark: 'released', chain: true, title: 'A releases', say: 'A releases.' },
      {
        id: 'b-wins',
        do: 'await',
        who: 'B',
        chain: true,
        measureFrom: { mark: 'released', fact: 'handoff', label: "B granted after A's release" },
        title: 'B is woken',
        say: 'The notice wakes B at once — it does not sleep out its 1.5 s retry delay — and B wins on all five nodes.',
      },
      {
        id: 'b-writes',
        do: 'write',
        who: 'B',
        resource: R,
        value: 'B: row 2',
        chain: true,
        title: 'B works',
        say: 'B works on the ledger.',
      },
      {
        id: 'b-releases',
        do: 'release',
        who: 'B',
        resource: R,
        title: 'B releases',
        say: 'B releases. At no moment did two clients believe they held the ledger: the checker stayed green.',
      },
    ],
  }),
};
