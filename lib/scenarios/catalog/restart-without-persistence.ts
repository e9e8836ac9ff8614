import { nodeList, Nodes, type NodeId, type ScenarioDefinition, type Step } from '../script';
import { AFTER_RESTART, cleanStep, OUTCOME_CHOICES as O } from './common';

const OFF = 'quarantine-off/ledger';
const ON = 'quarantine-on/ledger';
const TTL = 4_000;

/** One phase: `holder` locks on three nodes only, node `c` restarts empty, `other` asks. */
function phase(p: {
  tag: string;
  holder: string;
  other: string;
  resource: string;
  cut: NodeId[];
  c: NodeId;
  holders: NodeId[];
  safe: boolean;
}): Step[] {
  const { tag, holder, other, resource, cut, c, holders } = p;
  return [
    {
      id: `${tag}-partition`,
      do: 'node',
      action: { action: 'partition' },
      nodes: cut,
      chain: true,
      title: `Cut off ${nodeList(cut)}`,
      say: `${Nodes(cut)} are cut off from the clients, so ${holder}'s lock will live on exactly three nodes (${holders.join(', ')}): a bare majority.`,
    },
    {
      id: `${tag}-holder-acquires`,
      do: 'acquire',
      who: holder,
      resource,
      ttlMs: TTL,
      chain: true,
      title: `${holder} locks on 3 nodes`,
      say: `${holder} asks all five; ${nodeList(holders)} grant, which is enough.`,
    },
    {
      id: `${tag}-drop`,
      do: 'node',
      action: { action: 'reset' },
      nodes: cut,
      chain: true,
      title: 'Drop the held packets',
      say: `The partition drops what it held: ${holder}'s requests never reach ${nodeList(cut)}.`,
    },
    {
      id: `${tag}-heal`,
      do: 'node',
      action: { action: 'heal' },
      nodes: cut,
      chain: true,
      title: `Heal ${nodeList(cut)}`,
      say: `The network heals: ${nodeList(cut)} are reachable again, and free.`,
    },
    {
      id: `${tag}-crash`,
      do: 'node',
      action: { action: 'crash' },
      nodes: [c],
      chain: true,
      title: `Crash node ${c}`,
      say: `Node ${c}, one of the three that hold ${holder}'s key, crashes…`,
    },
    {
      id: `${tag}-restart`,
      do: 'node',
      action: { action: 'start', persistence: 'none' },
      nodes: [c],
      chain: true,
      title: `Node ${c} back, empty`,
      say: `…and restarts WITHOUT persistence: it comes back empty. ${holder}'s key there is gone, and so is the epoch sentinel that said "this node has its data".`,
    },
    {
      id: `${tag}-other-asks`,
      do: 'acquire',
      retry: AFTER_RESTART,
      who: other,
      resource,
      ttlMs: TTL,
      waitForNodes: [c, ...cut],
      reveals: `p-${tag}`,
      chain: true,
      title: `${other} asks`,
      say: `${other} asks for the same resource while ${holder} still holds it.`,
      revealBy: 'granted',
      explain: p.safe
        ? {
            refused: `${other}'s request finds node ${c}'s epoch sentinel gone, so the lock core takes the node for one that lost its data and quarantines it: node ${c} votes "quarantined" for one lease ceiling. With ${holder}'s key still on two nodes and node ${c} refusing, ${other} cannot make a majority. (The core calls the refusal LockContended or QuorumUnavailable depending on which votes it had counted when the outcome was settled.)`,
          }
        : {
            granted: `Nodes ${c}, ${cut.join(' and ')} are all free, so ${other} gets three votes — while ${holder} still believes it holds the lock on nodes ${holders.filter((n) => n !== c).join(' and ')}. Two holders at once: the checker turns red.`,
          },
    },
  ];
}

export const restartWithoutPersistenceScenario: ScenarioDefinition = {
  id: 'restart-without-persistence',
  number: 3,
  title: 'Restart without persistence',
  summary:
    'A node that restarts empty forgets the locks it granted. With quarantine off, two clients hold the lock at once; with quarantine on (the default), the empty node refuses to vote until every lock it could have granted has expired.',
  lesson:
    "Crash recovery is where Redlock needs a rule of its own. The Redis distlock page gives it: after a crash a node must stay unavailable for a bit longer than the longest TTL (or fsync every write), so that every lock it granted has expired. Without it, a node that comes back empty lets a second client in. The quarantine is this library's automation of that rule, and on its own it catches only a total loss (the epoch sentinel is gone with the data); a node back with old data keeps an old sentinel (scenario 9).",
  estimatedSeconds: 14,
  tags: ['process faults', 'data loss', 'quarantine'],
  build: (rng) => {
    const order = rng.shuffle([1, 2, 3, 4, 5]) as NodeId[];
    const cut = order.slice(0, 2).sort((a, b) => a - b) as NodeId[];
    const holders = order.slice(2).sort((a, b) => a - b) as NodeId[];
    const c = order[2 + rng.int(0, 2)]!;
    return {
      clients: [
        { name: 'A', description: 'quarantine OFF (explicitly unsafe)', quarantine: false },
        { name: 'B', description: 'quarantine OFF (explicitly unsafe)', quarantine: false },
        { name: 'C', description: 'quarantine on (the default)' },
        { name: 'D', description: 'quarantine on (the default)' },
      ],
      resources: [
        { name: OFF, description: 'phase 1: clients A and B run with quarantine off' },
        { name: ON, description: 'phase 2: clients C and D run with quarantine on' },
      ],
      maxTtlMs: TTL,
      ttlMs: TTL,
      simulated: ['The partition is real (a fault proxy holding packets); dropping the held packets is a real connection reset.'],
      steps: [
        cleanStep(),
        {
          id: 'p-off',
          do: 'predict',
          title: 'Predict: quarantine off',
          say: 'Phase 1: clients A and B run with quarantine OFF — an explicitly unsafe setting, the negative control.',
          question: `A will hold the ledger on nodes ${holders.join(', ')} only. Node ${c} then restarts empty. With quarantine OFF, does B get the lock?`,
          choices: [O.granted, O.refused],
        },
        ...phase({ tag: 'off', holder: 'A', other: 'B', resource: OFF, cut, c, holders, safe: false }),
        {
          id: 'off-both-work',
          do: 'wait-validity',
          who: 'A',
          resource: OFF,
          title: 'Both believe',
          say: "A and B both believe they hold the ledger until A's validity runs out. Look at the checker.",
        },
        {
          id: 'off-a-releases',
          do: 'release',
          who: 'A',
          resource: OFF,
          chain: true,
          title: 'A releases',
          say: 'A releases (its lease has ended).',
        },
        { id: 'off-b-releases', do: 'release', who: 'B', resource: OFF, chain: true, title: 'B releases', say: 'B releases.' },
        {
          ...cleanStep('clean-2'),
          title: 'Phase 2: a clean start',
          say: `Phase 2: the same story with quarantine ON, the default. The engine marks the nodes clean again for a fresh start — true now: nobody holds anything, and node ${c} is empty.`,
        },
        {
          id: 'p-on',
          do: 'predict',
          title: 'Predict: quarantine on',
          say: 'Clients C and D run with quarantine on.',
          question: `C will hold the ledger on nodes ${holders.join(', ')}; node ${c} restarts empty again. With quarantine ON, does D get the lock?`,
          choices: [O.granted, O.refused],
        },
        ...phase({ tag: 'on', holder: 'C', other: 'D', resource: ON, cut, c, holders, safe: true }),
        {
          id: 'on-d-waits',
          do: 'acquire',
          who: 'D',
          resource: ON,
          ttlMs: TTL,
          retry: { count: 40, delayMs: 250, jitterMs: 100 },
          title: 'D keeps asking',
          say: `D keeps asking. It can only win once C's keys have expired — after C's validity ended — even though node ${c} still votes "quarantined".`,
        },
        {
          id: 'on-d-releases',
          do: 'release',
          who: 'D',
          resource: ON,
          title: 'D releases',
          say: 'D releases. Phase 2 never had two holders: the checker stayed green.',
        },
      ],
    };
  },
};
