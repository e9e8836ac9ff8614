import { nodeList, Nodes, otherNodes, pickNodes, type ScenarioDefinition } from '../script';
import { cleanStep } from './common';

const TTL = 3_000;
const R1 = 'ledger-1';
const R2 = 'ledger-2';
const R3 = 'ledger-3';
const B_RETRY = { count: 200, delayMs: 40, jitterMs: 20 };

export const clockDriftScenario: ScenarioDefinition = {
  id: 'clock-drift',
  number: 8,
  title: 'Clock drift and clock jumps',
  summary:
    "Redlock needs no synchronised clocks, only clocks that run at about the same rate. Here the nodes' clocks jump ahead instead (simulated), so A's keys expire early. A jump within the drift allowance breaks nothing; a big jump on a majority gives B the lock while A still believes it holds it. One jumping node changes nothing here only because A's key is on all five nodes: against a bare majority, one node is enough.",
  lesson:
    "Redlock assumes no synchronised clocks, only local clocks that run at about the same rate, with an error small next to the TTL (the distlock page). The drift allowance (TTL × driftFactor) covers that small error. A clock that jumps — an NTP step, an administrator setting the time, a VM resuming — is outside the assumption: if it jumps on the node that A's and B's majorities share, that node forgets A's key early. Against a bare majority one such node is enough, the clock-jump case of Kleppmann's critique.",
  estimatedSeconds: 17,
  tags: ['clocks', 'assumptions'],
  build: (rng) => {
    const m = pickNodes(rng, 3);
    const single = otherNodes(m)[rng.int(0, 1)]!;
    return {
      clients: [
        { name: 'A', description: 'allows 10% for clock drift (driftFactor 0.1)', driftFactor: 0.1 },
        { name: 'B', description: 'allows 10% for clock drift; asks every ~40 ms', driftFactor: 0.1 },
      ],
      resources: [
        { name: R1, description: 'part 1: a majority jumps ahead ~0.22 s (within the allowance)' },
        { name: R2, description: 'part 2: a majority jumps ahead ~1 s (far beyond it)' },
        { name: R3, description: 'part 3: a single node jumps ahead ~2.25 s' },
      ],
      maxTtlMs: TTL,
      ttlMs: TTL,
      simulated: [
        "Clock jumps: the engine cuts what is left of A's key's TTL on the chosen nodes once, with PEXPIRE, as if their clocks had jumped ahead (an NTP step, an administrator setting the time, a VM resuming). No real clock is touched. Real drift — clocks running at slightly different rates — is far smaller, and is what the drift allowance is for.",
      ],
      steps: [
        cleanStep(),
        {
          id: 'a-1',
          do: 'acquire',
          who: 'A',
          resource: R1,
          ttlMs: TTL,
          title: 'A takes ledger-1',
          say: 'Redlock needs no synchronised clocks, only clocks that run at about the same rate. These clients allow 10% of the TTL for the difference (driftFactor 0.1, ten times the default, so it shows). A takes ledger-1 for 3 s and counts on 3 s − elapsed − 302 ms ≈ 2.7 s.',
        },
        {
          id: 'drift-8',
          do: 'drift',
          who: 'A',
          resource: R1,
          nodes: m,
          fastPercent: 8,
          chain: true,
          title: `${Nodes(m)}: clocks jump ~0.22 s`,
          say: `Simulated clock jump: the clocks of ${nodeList(m)} jump ahead by about 0.22 s, less than the 0.3 s allowance. Their copies of A's key expire that much early — still after A's validity ends.`,
        },
        {
          id: 'b-1',
          do: 'acquire',
          who: 'B',
          resource: R1,
          ttlMs: TTL,
          retry: B_RETRY,
          chain: true,
          title: 'B keeps asking',
          say: "B asks over and over. It wins only when a majority has let go of A's key: after A stopped counting on it.",
        },
        {
          id: 'b-1-release',
          do: 'release',
          who: 'B',
          resource: R1,
          title: 'B releases',
          say: 'B releases. Within the allowance: no overlap.',
        },
        {
          id: 'p-beyond',
          do: 'predict',
          title: 'Predict: far beyond the allowance',
          say: 'Part 2: the same nodes, far more wrong.',
          question: `Now the clocks of ${nodeList(m)} jump ahead by about 1 s — more than three times the allowance. Will B get ledger-2 while A still believes it holds it?`,
          choices: [
            { id: 'overlap', label: 'Yes: two holders at once' },
            { id: 'no-overlap', label: "No: B waits until A's validity is over" },
          ],
        },
        { id: 'a-2', do: 'acquire', who: 'A', resource: R2, ttlMs: TTL, chain: true, title: 'A takes ledger-2', say: 'A takes ledger-2.' },
        {
          id: 'drift-50',
          do: 'drift',
          who: 'A',
          resource: R2,
          nodes: m,
          fastPercent: 50,
          chain: true,
          title: `${Nodes(m)}: clocks jump ~1 s`,
          say: `Simulated clock jump: the clocks of ${nodeList(m)} jump ahead by about 1 s.`,
        },
        {
          id: 'b-2',
          do: 'acquire',
          who: 'B',
          resource: R2,
          ttlMs: TTL,
          retry: B_RETRY,
          reveals: 'p-beyond',
          revealBy: 'overlap',
          chain: true,
          title: 'B keeps asking',
          say: 'B asks over and over.',
          explain: {
            overlap: `The majority whose clocks jumped dropped A's key about a second early, well before A's validity ended, and B got those three votes. Two holders at once: a clock jump is outside what Redlock assumes.`,
          },
        },
        {
          id: 'a-2-done',
          do: 'wait-validity',
          who: 'A',
          resource: R2,
          title: 'Both believe',
          say: "Both believe they hold ledger-2 until A's validity ends.",
        },
        { id: 'b-2-release', do: 'release', who: 'B', resource: R2, chain: true, title: 'B releases', say: 'B releases.' },
        { id: 'a-3', do: 'acquire', who: 'A', resource: R3, ttlMs: TTL, title: 'A takes ledger-3', say: 'Part 3: A takes ledger-3.' },
        {
          id: 'drift-300',
          do: 'drift',
          who: 'A',
          resource: R3,
          nodes: [single],
          fastPercent: 300,
          chain: true,
          title: `Node ${single}: clock jumps ~2.25 s`,
          say: `Simulated clock jump: node ${single}'s clock alone jumps ahead by about 2.25 s, so its copy of A's key dies at a quarter of its time.`,
        },
        {
          id: 'b-3',
          do: 'acquire',
          who: 'B',
          resource: R3,
          ttlMs: TTL,
          retry: B_RETRY,
          chain: true,
          title: 'B keeps asking',
          say: `B asks over and over. Here one node cannot hand out the lock, however far its clock jumped, only because A's key is on all five nodes: the other four still hold it. Had A held a bare majority (three of five, as in scenario 3), node ${single}'s jump would have been enough: it and the two nodes A never reached make three.`,
        },
        {
          id: 'b-3-release',
          do: 'release',
          who: 'B',
          resource: R3,
          title: 'B releases',
          say: 'B releases. In this run only the majority that jumped beyond the allowance broke mutual exclusion. With A on a bare majority, one node whose clock jumps is enough: it can be the node that two majorities share.',
        },
      ],
    };
  },
};
