import type { ScenarioDefinition } from '../script';
import { cleanStep } from './common';

const R = 'ledger';

export const clientPauseScenario: ScenarioDefinition = {
  id: 'client-pause',
  number: 5,
  title: 'Client pause (GC)',
  summary:
    'A stalls (a stop-the-world pause) past its validity; B acquires; A wakes and writes. The plain store takes the stale write, the fenced store rejects it.',
  lesson:
    'No lock service can stop a paused client from believing it still holds the lock. A fencing token, checked by the storage, stops its writes. Redlock itself produces no such number: this library adds one to every grant. And the storage can only refuse A because B wrote first with a higher one.',
  estimatedSeconds: 8,
  tags: ['client faults', 'fencing'],
  build: () => ({
    clients: [
      { name: 'A', description: 'a worker that will stall in a long pause (simulated)' },
      { name: 'B', description: 'a second worker' },
    ],
    resources: [{ name: R, description: 'the lock guarding both stores' }],
    maxTtlMs: 2_000,
    ttlMs: 2_000,
    simulated: [
      "A's pause: the engine stops running A's steps, as a garbage-collection pause or a frozen VM would stop a real client. A's keys on the nodes are real and expire on their own.",
    ],
    steps: [
      cleanStep(),
      {
        id: 'a-acquires',
        do: 'acquire',
        who: 'A',
        resource: R,
        ttlMs: 2_000,
        title: 'A takes the lock',
        say: 'A takes the lock for 2 s and gets a fencing token, a number that grows with every grant. Redlock itself produces no such number: this library adds one.',
      },
      {
        id: 'a-writes',
        do: 'write',
        who: 'A',
        resource: R,
        value: 'A: draft 1',
        chain: true,
        title: 'A writes',
        say: 'A writes to both stores, with its fence.',
      },
      {
        id: 'a-pauses',
        do: 'pause-client',
        who: 'A',
        title: 'A stalls',
        say: "A stops dead: a long GC pause, a frozen VM, a swapped-out process. (Simulated: the engine just stops running A's steps.) A renews nothing and checks no clock; it still believes it holds the lock.",
      },
      {
        id: 'b-acquires',
        do: 'acquire',
        who: 'B',
        resource: R,
        ttlMs: 2_000,
        retry: { count: 40, delayMs: 150, jitterMs: 50 },
        title: 'B asks and waits',
        say: "B asks and keeps retrying. A's keys expire on their own; then B wins, with a higher fence.",
      },
      {
        id: 'b-writes',
        do: 'write',
        who: 'B',
        resource: R,
        value: 'B: final',
        chain: true,
        title: 'B writes',
        say: 'B writes to both stores with its fence.',
      },
      {
        id: 'p-stale',
        do: 'predict',
        title: 'Predict: the stale write',
        say: 'A is about to wake up, unaware that time has passed.',
        question: 'A wakes and writes with its old fence. Which store accepts the write?',
        choices: [
          { id: 'both', label: 'Both stores' },
          { id: 'unfenced-only', label: 'Only the plain store' },
          { id: 'fenced-only', label: 'Only the fenced store' },
          { id: 'neither', label: 'Neither' },
        ],
      },
      { id: 'a-wakes', do: 'wake-client', who: 'A', chain: true, title: 'A wakes', say: 'A wakes up exactly where it stopped.' },
      {
        id: 'a-stale-write',
        do: 'write',
        who: 'A',
        resource: R,
        value: 'A: draft 2 (stale)',
        reveals: 'p-stale',
        chain: true,
        title: 'A writes (stale)',
        say: 'A writes again, with its old fence.',
        explain: {
          'unfenced-only':
            "The plain store cannot tell: A's stale write overwrote B's. The fenced store rejects A's only because B wrote first: it has seen B's higher fence. Had A woken before B's first write, the fenced store would have taken A's write too — the fence protects the data from the moment a newer holder has used it.",
        },
      },
      {
        id: 'a-releases',
        do: 'release',
        who: 'A',
        resource: R,
        chain: true,
        title: 'A releases',
        say: "A releases: nothing of A's is left, and compare-and-delete never touches B's key.",
      },
      {
        id: 'b-releases',
        do: 'release',
        who: 'B',
        resource: R,
        title: 'B releases',
        say: 'B releases. The checker is red — A believed past its validity (a pause Redlock cannot prevent) — but the fenced store kept the data right.',
      },
    ],
  }),
};
