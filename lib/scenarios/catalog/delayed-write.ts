import type { ScenarioDefinition } from '../script';
import { cleanStep } from './common';

const R = 'ledger';
const YES_NO = [
  { id: 'yes', label: "Yes, B's value" },
  { id: 'no', label: "No, A's stale value" },
] as const;

export const delayedWriteScenario: ScenarioDefinition = {
  id: 'delayed-write',
  number: 10,
  title: 'Delayed after the grant',
  summary:
    "A holds the lock and sends a write; the network holds the write past A's lease (simulated). B takes the lock and writes; then A's write arrives. The plain store takes it over B's, the fenced store refuses it.",
  lesson:
    "A lock with a lease cannot by itself protect against a delay after the grant: A did everything right, and nobody ever believed they held the lock at the same time as someone else, yet a write A sent while it held the lock lands after B's. It is the cousin of the GC pause (scenario 5). Only the storage can refuse it, by checking a fencing token: B's is higher.",
  estimatedSeconds: 8,
  tags: ['network', 'fencing'],
  build: () => ({
    clients: [
      { name: 'A', description: 'a worker whose write is held up in the network (simulated)' },
      { name: 'B', description: 'a second worker' },
    ],
    resources: [{ name: R, description: 'the lock guarding both stores' }],
    maxTtlMs: 2_000,
    ttlMs: 2_000,
    simulated: [
      "The delayed write: the engine holds A's write and hands it to the stores later, as a congested or retransmitting network would. A's lock, its keys on the nodes, B's lock and every fence are real.",
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
        say: 'A takes the lock for 2 s and gets a fencing token, a number that grows with every grant (this library adds it; Redlock itself has none).',
      },
      {
        id: 'a-sends',
        do: 'send-write',
        who: 'A',
        resource: R,
        value: 'A: entry 1 (sent in time)',
        chain: true,
        title: 'A sends a write',
        say: 'Well inside its validity, A sends a write to both stores, with its fence. The network holds the packet up (simulated: the engine keeps the write and delivers it later).',
      },
      {
        id: 'a-lease-ends',
        do: 'wait-validity',
        who: 'A',
        resource: R,
        chain: true,
        title: "A's validity runs out",
        say: "No answer comes back. A's validity runs out while its write is still on the way; A stops counting on the lock, as a careful client does.",
      },
      {
        id: 'a-gives-up',
        do: 'release',
        who: 'A',
        resource: R,
        chain: true,
        title: 'A lets go',
        say: 'A gives up and releases, deleting whatever is left of its keys. Its write is still in the network.',
      },
      {
        id: 'b-acquires',
        do: 'acquire',
        who: 'B',
        resource: R,
        ttlMs: 2_000,
        retry: { count: 40, delayMs: 150, jitterMs: 50 },
        title: 'B takes the lock',
        say: "B asks: A's keys are gone, so B wins at once, with a higher fence. Nobody else believes they hold the lock: the lock has done its job.",
      },
      {
        id: 'b-writes',
        do: 'write',
        who: 'B',
        resource: R,
        value: 'B: entry 1',
        chain: true,
        title: 'B writes',
        say: 'B writes to both stores with its fence.',
      },
      {
        id: 'p-plain',
        do: 'predict',
        title: 'Predict: the plain store',
        say: "A's write, sent while A held the lock, is still in the network.",
        question: "A's delayed write arrives now. Does the plain store end with B's value?",
        choices: YES_NO,
      },
      {
        id: 'p-fenced',
        do: 'predict',
        title: 'Predict: the fenced store',
        say: "The fenced store keeps the highest fence it has seen: B's.",
        question: "And the fenced store: does it end with B's value?",
        choices: YES_NO,
      },
      {
        id: 'a-write-arrives',
        do: 'deliver-write',
        sent: 'a-sends',
        keeps: 'B',
        revealsPlain: 'p-plain',
        revealsFenced: 'p-fenced',
        chain: true,
        title: "A's write arrives",
        say: "A's write arrives, with the fence A held when it sent it.",
        explain: {
          'plain-no':
            "The plain store takes every write in the order it arrives: A's, sent in time but delivered late, overwrote B's. No lock can prevent that: the lock was never held by two at once.",
          'fenced-yes':
            "The fenced store refused A's write: its fence is below B's, which it has already seen. Had A's write arrived before B's first write, the store would have taken it: the fence protects from the moment a newer holder has written.",
        },
      },
      {
        id: 'b-releases',
        do: 'release',
        who: 'B',
        resource: R,
        title: 'B releases',
        say: 'B releases. The checker is green — no two clients believed at once — and still the plain store holds a stale write. Delays after the grant are beyond any lock; only fencing at the storage catches them.',
      },
    ],
  }),
};
