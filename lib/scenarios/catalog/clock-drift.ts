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
  title: 'Clock drift on a node',
  summary:
    'Nodes whose clocks run fast let keys expire early. Within the drift allowance nothing breaks; far beyond it on a majority, B gets the lock while A still believes it holds it. One wild node alone cannot break it.',
  lesson:
    'Redlock assumes clocks run at about the same rate: the drift allowance (driftFactor × TTL) covers small differences, not a majority of clocks running far too fast.',
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
        { name: R1, description: 'part 1: a majority 8% fast (within the allowance)' },
        { name: R2, description: 'part 2: a majority 50% fast (far beyond it)' },
        { name: R3, description: 'part 3: a single node 4× fast' },
      ],
      maxTtlMs: TTL,
      ttlMs: TTL,
      simulated: [
        'Clock drift: the engine shortens the TTL of A\'s key on the "fast" nodes with PEXPIRE, as if their clocks ran fast. No real clock is touched.',
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
          say: 'These clients allow 10% of the TTL for clock drift (driftFactor 0.1, ten times the default, so it shows). A takes ledger-1 for 3 s and counts on 3 s − elapsed − 302 ms ≈ 2.7 s.',
        },
        {
          id: 'drift-8',
          do: 'drift',
          who: 'A',
          resource: R1,
          nodes: m,
          fastPercent: 8,
          chain: true,
          title: `${Nodes(m)}: 8% fast`,
          say: `Simulated drift: ${nodeList(m)} run 8% fast, so their countdown of A's key ends early — but still after A's validity ends.`,
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
          question: `Now ${nodeList(m)} run 50% fast — five times the allowance. Will B get ledger-2 while A still believes it holds it?`,
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
          title: `${Nodes(m)}: 50% fast`,
          say: `Simulated drift: ${nodeList(m)} run 50% fast.`,
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
            overlap: `The fast majority dropped A's key well before A's validity ended; B got those three votes. Two holders at once: the drift assumption was broken.`,
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
          title: `Node ${single}: 4× fast`,
          say: `Simulated drift: node ${single} alone runs 4× fast, so its copy of A's key dies at a quarter of its time.`,
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
          say: "B asks over and over. One node, however wrong its clock, cannot hand out the lock: the other four still hold A's key.",
        },
        {
          id: 'b-3-release',
          do: 'release',
          who: 'B',
          resource: R3,
          title: 'B releases',
          say: 'B releases. Only the majority beyond the allowance broke mutual exclusion.',
        },
      ],
    };
  },
};
