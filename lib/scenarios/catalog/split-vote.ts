import { nodeList, type NodeId, type ScenarioDefinition } from '../script';
import { cleanStep } from './common';

const R = 'ledger';
const FAR_MS = 80;

export const splitVoteScenario: ScenarioDefinition = {
  id: 'split-vote',
  number: 6,
  title: 'Split vote',
  summary:
    'Three clients ask at the same instant; each reaches its nearest nodes first, so the votes split 2–2–1 and nobody wins. Jittered retries and release wake-ups sort it out.',
  lesson:
    "Contention can make a round fail for everyone. Failed attempts release at once and retry after a random delay, so one client gets ahead; the winner's release wakes the next.",
  estimatedSeconds: 9,
  tags: ['contention', 'network', 'retries'],
  build: (rng) => {
    const order = rng.shuffle([1, 2, 3, 4, 5]) as NodeId[];
    const nearA = order.slice(0, 2).sort((a, b) => a - b) as NodeId[];
    const nearB = order.slice(2, 4).sort((a, b) => a - b) as NodeId[];
    const nearC = order.slice(4) as NodeId[];
    const all: NodeId[] = [1, 2, 3, 4, 5];
    return {
      clients: [
        { name: 'A', description: `near ${nodeList(nearA)}`, near: nearA },
        { name: 'B', description: `near ${nodeList(nearB)}`, near: nearB },
        { name: 'C', description: `near ${nodeList(nearC)}`, near: nearC },
      ],
      resources: [{ name: R, description: 'the resource all three want' }],
      maxTtlMs: 2_000,
      ttlMs: 2_000,
      simulated: [
        'Distance: each client reaches its "near" nodes directly and the others through their fault proxies, which add a real 80 ms round trip.',
      ],
      steps: [
        cleanStep(),
        {
          id: 'distance',
          do: 'node',
          action: { action: 'latency', latencyMs: FAR_MS },
          nodes: all,
          title: 'Near and far',
          say: `Each client sits next to some nodes and far from the others (${FAR_MS} ms round trip): A is near ${nodeList(nearA)}, B near ${nodeList(nearB)}, C near ${nodeList(nearC)}.`,
        },
        {
          id: 'p-round',
          do: 'predict',
          title: 'Predict: the first round',
          say: 'All three are about to ask at the same instant.',
          question: 'A, B and C ask for the ledger at the same instant. Who wins this first round?',
          choices: [
            { id: 'A', label: 'A' },
            { id: 'B', label: 'B' },
            { id: 'C', label: 'C' },
            { id: 'nobody', label: 'Nobody' },
          ],
        },
        {
          id: 'round-1',
          do: 'together',
          who: ['A', 'B', 'C'],
          resource: R,
          ttlMs: 2_000,
          retry: { count: 0, delayMs: 0, jitterMs: 0 },
          reveals: 'p-round',
          chain: true,
          title: 'Round 1: all at once',
          say: 'All three ask, once.',
          explain: {
            nobody: `Each request reaches its near nodes first: A gets ${nearA.length} votes, B ${nearB.length}, C ${nearC.length}. Nobody has 3 of 5 — a split vote. Each one releases what it got.`,
          },
        },
        {
          id: 'race',
          do: 'together',
          who: ['A', 'B', 'C'],
          resource: R,
          ttlMs: 2_000,
          retry: { count: 60, delayMs: 200, jitterMs: 150 },
          work: { holdMs: 400 },
          title: 'They keep trying',
          say: "Now they keep trying with the lock core's own retries: after a split vote a client backs off for a random moment, so one gets ahead; a client waiting for a held lock is woken by its release. Each winner works 400 ms, writes with its fence, and releases.",
        },
        {
          id: 'calm',
          do: 'node',
          action: { action: 'heal' },
          nodes: all,
          title: 'Network back to normal',
          say: 'Everyone got the ledger in turn, one at a time: the checker stayed green, and the fences only went up.',
        },
      ],
    };
  },
};
