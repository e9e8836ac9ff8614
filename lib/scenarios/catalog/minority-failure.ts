import { nodeList, Nodes, pickNodes, type NodeId, type ScenarioDefinition } from '../script';
import { AFTER_RESTART, cleanStep, OUTCOME_CHOICES as O } from './common';

const R = 'ledger';
const TTL = 5_000;

export const minorityFailureScenario: ScenarioDefinition = {
  id: 'minority-failure',
  number: 2,
  title: 'Minority failure',
  summary:
    'Two of five nodes crash: locks still work on the other three. A third crashes: nobody can lock, and the votes say why. Back from the crash, the three sit out one lease ceiling before they vote again.',
  lesson:
    'Redlock survives the loss of any minority. Without a majority it refuses rather than guess: the quorum counts the configured five, not the nodes that answer. And a node back from a crash is not trusted at once, even with its data on disk.',
  estimatedSeconds: 16,
  tags: ['process faults', 'availability'],
  build: (rng) => {
    const order = pickNodes(rng, 3);
    const [x, y, z] = rng.shuffle(order) as NodeId[];
    const first = [x!, y!].sort((a, b) => a - b) as NodeId[];
    const all = [x!, y!, z!].sort((a, b) => a - b) as NodeId[];
    return {
      clients: [
        { name: 'A', description: 'a worker' },
        { name: 'B', description: 'another worker' },
      ],
      resources: [{ name: R, description: 'the resource both clients want' }],
      maxTtlMs: TTL,
      ttlMs: TTL,
      simulated: [],
      steps: [
        {
          id: 'persistence',
          do: 'ensure-persistence',
          mode: 'aof-always',
          title: 'Durable nodes',
          say: 'The nodes that crash here come back with their data, so the run makes sure every node writes its AOF with fsync on every write (aof-always).',
        },
        cleanStep(),
        {
          id: 'p-two-down',
          do: 'predict',
          title: 'Predict: two nodes down',
          say: 'Two nodes are about to crash.',
          question: `${Nodes(first)} crash (SIGKILL). Can A still take the lock on the other three?`,
          choices: [O.granted, O.unavailable, O.contended],
        },
        {
          id: 'crash-two',
          do: 'node',
          action: { action: 'crash' },
          nodes: first,
          chain: true,
          title: `Crash ${nodeList(first)}`,
          say: `${Nodes(first)} crash: their processes are killed.`,
        },
        {
          id: 'a-acquires',
          do: 'acquire',
          who: 'A',
          resource: R,
          ttlMs: TTL,
          reveals: 'p-two-down',
          chain: true,
          title: 'A asks',
          say: 'A asks all five. The two dead nodes vote against at once (connection refused); the other three grant.',
          explain: { granted: 'Three of five is still a majority: the lock is safe and available with a minority down.' },
        },
        {
          id: 'a-writes',
          do: 'write',
          who: 'A',
          resource: R,
          value: 'A: row 1',
          chain: true,
          title: 'A works',
          say: 'A works while it holds the lock.',
        },
        { id: 'a-releases', do: 'release', who: 'A', resource: R, title: 'A releases', say: 'A releases on every node that answers.' },
        {
          id: 'p-three-down',
          do: 'predict',
          title: 'Predict: a third node down',
          say: 'One more node is about to crash.',
          question: `Node ${z} crashes too: only two nodes are left. Can B take the lock?`,
          choices: [O.granted, O.unavailable, O.contended],
        },
        {
          id: 'crash-third',
          do: 'node',
          action: { action: 'crash' },
          nodes: [z!],
          chain: true,
          title: `Crash node ${z}`,
          say: `Node ${z} crashes: three of five are down.`,
        },
        {
          id: 'b-refused',
          do: 'acquire',
          who: 'B',
          resource: R,
          ttlMs: TTL,
          retry: { count: 2, delayMs: 300, jitterMs: 100 },
          reveals: 'p-three-down',
          chain: true,
          title: 'B asks (3 tries)',
          say: 'B asks, and retries twice.',
          explain: {
            QuorumUnavailableError:
              'Two votes can never make 3 of 5. Redlock does not shrink the quorum to the nodes that answer: if it did, the two halves of a network partition could each grant the same lock.',
          },
        },
        {
          id: 'restart',
          do: 'node',
          action: { action: 'start' },
          nodes: all,
          title: `Start ${nodeList(all)}`,
          say: `${Nodes(all)} start again and replay their AOF: every key and the epoch sentinel survived.`,
        },
        {
          id: 'b-at-once',
          do: 'acquire',
          retry: AFTER_RESTART,
          who: 'B',
          resource: R,
          ttlMs: TTL,
          waitForNodes: all,
          chain: true,
          title: 'B asks at once',
          say: `B asks as soon as it can reach them. The lock core does not take a crashed node's word that it kept everything: each of ${nodeList(all)} is a new redis-server process, and nothing on a node tells its own AOF from an older copy. They vote "quarantined".`,
        },
        {
          id: 'sit-out',
          do: 'wait-quarantine',
          nodes: all,
          fact: { id: 'sat-out', label: 'The restarted nodes sat out, counted from their restart' },
          title: 'They sit out',
          say: `${Nodes(all)} sit out one lease ceiling (${TTL / 1000} s) from their start: by then any lock they granted before the crash has expired.`,
        },
        {
          id: 'b-acquires',
          do: 'acquire',
          retry: AFTER_RESTART,
          who: 'B',
          resource: R,
          ttlMs: TTL,
          chain: true,
          title: 'B asks again',
          say: 'B asks again: the nodes vote again.',
        },
        {
          id: 'b-releases',
          do: 'release',
          who: 'B',
          resource: R,
          title: 'B releases',
          say: 'B releases. Availability came and went; safety never did.',
        },
      ],
    };
  },
};
