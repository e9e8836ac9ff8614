import { nodeList, Nodes, type NodeId, type ScenarioDefinition, type Step } from '../script';
import { AFTER_RESTART, cleanStep, OUTCOME_CHOICES as O } from './common';

const OFF = 'quarantine-off/pool';
const ON = 'quarantine-on/pool';
const PERMITS = 2;
const TTL = 5_000;
/** A's first guess may be B's slot (held): it is refused, reads every slot and asks for the free one. */
const SECOND_TRY = { count: 3, delayMs: 150, jitterMs: 50 } as const;

/**
 * One phase: `full` takes a permit on all five nodes, `bare` the other on three nodes only, node
 * `c` (one of the three) restarts empty, `asker` asks for a third permit.
 */
function phase(p: {
  tag: string;
  full: string;
  bare: string;
  asker: string;
  resource: string;
  cut: NodeId[];
  c: NodeId;
  holders: NodeId[];
  safe: boolean;
}): Step[] {
  const { tag, full, bare, asker, resource, cut, c, holders } = p;
  const rest = holders.filter((n) => n !== c);
  return [
    {
      id: `${tag}-full-acquires`,
      do: 'acquire',
      who: full,
      resource,
      ttlMs: TTL,
      waitForNodes: [1, 2, 3, 4, 5],
      chain: true,
      title: `${full} takes a permit`,
      say: `${full} asks all five nodes for a free slot and gets one: its key in that slot is on all five.`,
    },
    {
      id: `${tag}-partition`,
      do: 'node',
      action: { action: 'partition' },
      nodes: cut,
      chain: true,
      title: `Cut off ${nodeList(cut)}`,
      say: `${Nodes(cut)} are cut off from the clients, so ${bare}'s permit will live on exactly three nodes (${holders.join(', ')}): a bare majority.`,
    },
    {
      id: `${tag}-bare-acquires`,
      do: 'acquire',
      who: bare,
      resource,
      ttlMs: TTL,
      retry: SECOND_TRY,
      chain: true,
      title: `${bare} takes the other permit`,
      say: `${bare} asks for a permit. ${full}'s slot is taken (if ${bare} guesses it first, it is refused, reads every slot and asks for the free one), so ${bare} gets the other slot: ${nodeList(holders)} grant it, which is a majority. Both permits are held: the semaphore is full.`,
    },
    {
      id: `${tag}-drop`,
      do: 'node',
      action: { action: 'reset' },
      nodes: cut,
      chain: true,
      title: 'Drop the held packets',
      say: `The partition drops what it held: ${bare}'s requests never reach ${nodeList(cut)}.`,
    },
    {
      id: `${tag}-heal`,
      do: 'node',
      action: { action: 'heal' },
      nodes: cut,
      chain: true,
      title: `Heal ${nodeList(cut)}`,
      say: `The network heals: ${nodeList(cut)} are reachable again. They hold ${full}'s key, and none in ${bare}'s slot.`,
    },
    {
      id: `${tag}-crash`,
      do: 'node',
      action: { action: 'crash' },
      nodes: [c],
      chain: true,
      title: `Crash node ${c}`,
      say: `Node ${c}, one of the three that hold ${bare}'s slot key, crashes…`,
    },
    {
      id: `${tag}-restart`,
      do: 'node',
      action: { action: 'start', persistence: 'none' },
      nodes: [c],
      chain: true,
      title: `Node ${c} back, empty`,
      say: `…and restarts WITHOUT persistence: it comes back empty. Its copies of both slot keys are gone, and so is the epoch sentinel that said "this node has its data". Node ${c} no longer knows it voted for ${bare}.`,
    },
    {
      id: `${tag}-asker-asks`,
      do: 'acquire',
      retry: AFTER_RESTART,
      who: asker,
      resource,
      ttlMs: TTL,
      waitForNodes: [c, ...cut],
      reveals: `p-${tag}`,
      chain: true,
      title: `${asker} asks for a permit`,
      say: `${asker} asks for a permit while ${full} and ${bare} still hold both.`,
      revealBy: 'granted',
      explain: p.safe
        ? {
            refused: `${asker}'s request finds node ${c}'s epoch sentinel gone, so the lock core takes the node for one that lost its data and quarantines it: node ${c} votes "quarantined" for one lease ceiling instead of voting again. ${full}'s slot is held on four nodes; ${bare}'s is still held on ${nodeList(rest)}, and with node ${c} refusing only ${nodeList(cut)} can be for ${asker}: two votes, no majority for either slot. (The core calls the refusal LockContended or QuorumUnavailable depending on which votes it had counted when the outcome was settled.)`,
          }
        : {
            granted: `${full}'s slot is held on four nodes, so ${asker} can only win ${bare}'s. Node ${c}'s copy of that slot is empty: it votes for ${asker} — its second vote for one slot. With ${nodeList(cut)}, which never saw ${bare}'s key, that is three of five, a majority for a slot that ${bare}'s majority (${nodeList(holders)}) still holds. Two majorities of five always share a node; here they share node ${c}, and its vote counted twice. ${full}, ${bare} and ${asker} each believe they hold a permit of a 2-permit semaphore: the checker turns red.`,
          },
    },
  ];
}

export const semaphoreRestartScenario: ScenarioDefinition = {
  id: 'semaphore-restart',
  number: 13,
  title: 'Semaphore: a permit given twice',
  summary:
    'Two clients hold both permits of a 2-permit semaphore and a node restarts empty. With the quarantine off, its empty copy of a slot votes again and a third client gets a permit a majority had already given; with the quarantine on (the default), the empty node refuses to vote until those permits have expired.',
  lesson:
    "A semaphore of N permits is N locks here, one per slot: a permit is the lock of one free slot, granted by a majority of the nodes exactly as a mutex is. (Counting holders on each node instead would let three clients share two permits with no fault at all: docs/semaphores.md.) So the semaphore inherits Redlock's crash rule unchanged, and what breaks without it: a node that restarts empty forgets the slot it granted, and its empty copy votes a second time, for a new client. With the quarantine off, a third client holds a permit of a 2-permit semaphore; with the quarantine on, the empty node sits out one lease ceiling, until every permit it could have granted has expired (after the TTL, past every holder's validity).",
  estimatedSeconds: 20,
  tags: ['process faults', 'data loss', 'quarantine', 'semaphore'],
  build: (rng) => {
    const order = rng.shuffle([1, 2, 3, 4, 5]) as NodeId[];
    const cut = order.slice(0, 2).sort((a, b) => a - b) as NodeId[];
    const holders = order.slice(2).sort((a, b) => a - b) as NodeId[];
    const c = order[2 + rng.int(0, 2)]!;
    const off = 'quarantine OFF (explicitly unsafe)';
    const on = 'quarantine on (the default)';
    return {
      clients: [
        { name: 'A', description: off, quarantine: false },
        { name: 'B', description: off, quarantine: false },
        { name: 'C', description: off, quarantine: false },
        { name: 'D', description: on },
        { name: 'E', description: on },
        { name: 'F', description: on },
      ],
      resources: [
        { name: OFF, description: 'phase 1: a semaphore of 2 permits; clients A, B and C run with quarantine off', limit: PERMITS },
        { name: ON, description: 'phase 2: a semaphore of 2 permits; clients D, E and F run with quarantine on', limit: PERMITS },
      ],
      maxTtlMs: TTL,
      ttlMs: TTL,
      simulated: [
        'The partition is real (a fault proxy holding packets); dropping the held packets is a real connection reset.',
        "Which slot each permit takes is the lock core's own random choice, not the seed's: the outcome does not depend on it (the third client can only win the slot held on three nodes).",
      ],
      steps: [
        cleanStep(),
        {
          id: 'p-off',
          do: 'predict',
          title: 'Predict: quarantine off',
          say: `Phase 1: a semaphore of ${PERMITS} permits. The lock core builds it as ${PERMITS} locks, slot 0 and slot 1; a permit is the lock of one free slot, granted by a majority like any lock, so at most one holder per slot and at most ${PERMITS} holders. Clients A, B and C run with quarantine OFF — an explicitly unsafe setting, the negative control.`,
          question: `B will hold a permit on all five nodes, A the other on nodes ${holders.join(', ')} only. Node ${c} then restarts empty. With quarantine OFF, does C get a permit?`,
          choices: [O.granted, O.refused],
        },
        ...phase({ tag: 'off', full: 'B', bare: 'A', asker: 'C', resource: OFF, cut, c, holders, safe: false }),
        {
          id: 'off-all-believe',
          do: 'wait-validity',
          who: 'B',
          resource: OFF,
          title: 'Three believe',
          say: `A, B and C all believe they hold a permit until B's validity runs out: three holders of a semaphore of two. Look at the checker, and at node ${c}'s keys: A's, then C's, in the same slot.`,
        },
        {
          id: 'off-b-releases',
          do: 'release',
          who: 'B',
          resource: OFF,
          chain: true,
          title: 'B releases',
          say: 'B releases (its lease has ended).',
        },
        { id: 'off-a-releases', do: 'release', who: 'A', resource: OFF, chain: true, title: 'A releases', say: 'A releases.' },
        { id: 'off-c-releases', do: 'release', who: 'C', resource: OFF, chain: true, title: 'C releases', say: 'C releases.' },
        {
          ...cleanStep('clean-2'),
          title: 'Phase 2: a clean start',
          say: `Phase 2: the same story with quarantine ON, the default. The engine marks the nodes clean again for a fresh start — true now: nobody holds anything, and node ${c} is empty.`,
        },
        {
          id: 'p-on',
          do: 'predict',
          title: 'Predict: quarantine on',
          say: 'Clients D, E and F run with quarantine on.',
          question: `E will hold a permit on all five nodes, D the other on nodes ${holders.join(', ')} only; node ${c} restarts empty again. With quarantine ON, does F get a permit?`,
          choices: [O.granted, O.refused],
        },
        ...phase({ tag: 'on', full: 'E', bare: 'D', asker: 'F', resource: ON, cut, c, holders, safe: true }),
        {
          id: 'on-f-waits',
          do: 'acquire',
          who: 'F',
          resource: ON,
          ttlMs: TTL,
          retry: { count: 40, delayMs: 250, jitterMs: 100 },
          title: 'F keeps asking',
          say: `F keeps asking. It can only win once one of the two permits has expired — E's, taken first, comes free first; its keys expire after E's validity ended — while node ${c} still votes "quarantined".`,
        },
        { id: 'on-e-releases', do: 'release', who: 'E', resource: ON, chain: true, title: 'E releases', say: 'E releases.' },
        {
          id: 'on-f-releases',
          do: 'release',
          who: 'F',
          resource: ON,
          chain: true,
          title: 'F releases',
          say: 'F releases. Phase 2 never had more than two holders: the checker stayed green.',
        },
      ],
    };
  },
};
