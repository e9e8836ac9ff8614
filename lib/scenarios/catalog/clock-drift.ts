import { nodeList, Nodes, otherNodes, pickNodes, type NodeId, type ScenarioDefinition, type Step } from '../script';
import { AFTER_RESTART, cleanStep } from './common';

const TTL = 3_000;
const R1 = 'ledger-1';
const R2 = 'ledger-2';
const R3 = 'ledger-3';
const R4 = 'ledger-4';
const B_RETRY = { count: 200, delayMs: 40, jitterMs: 20 };

export const clockDriftScenario: ScenarioDefinition = {
  id: 'clock-drift',
  number: 8,
  title: 'Clock drift and clock jumps',
  summary:
    "Redlock needs no synchronised clocks, only clocks that run at about the same rate. Here the nodes' clocks jump ahead instead (simulated), so A's keys expire early. A jump within the drift allowance breaks nothing; a big jump on a majority gives B the lock while A still believes it holds it. One jumping node changes nothing while A's key is on all five nodes; against a bare majority one node is enough, and only the fence keeps A's late write out.",
  lesson:
    "Redlock assumes no synchronised clocks, only local clocks that run at about the same rate, with an error small next to the TTL (the distlock page). The drift allowance (TTL × driftFactor) covers that small error. A clock that jumps — an NTP step, an administrator setting the time, a VM resuming — is outside the assumption: if it jumps on the node that A's and B's majorities share, that node forgets A's key early. Against a bare majority one such node is enough, the clock-jump case of Kleppmann's critique; then the fence keeps the stale write out. A clock reset backward, the critique's other case, makes a node keep keys longer than meant: that costs availability, not safety, so this run shows only forward jumps (this library's clock check quarantines a node whose clock goes back too, since that would pull the fence register's clock floor back).",
  estimatedSeconds: 23,
  tags: ['clocks', 'assumptions'],
  build: (rng) => {
    const m = pickNodes(rng, 3);
    const single = otherNodes(m)[rng.int(0, 1)]!;
    // Part 4: A's lock on a bare majority (`holders`), `cut` out of its reach; `jumper` is one of the holders.
    const order = rng.shuffle([1, 2, 3, 4, 5]) as NodeId[];
    const cut = order.slice(0, 2).sort((a, b) => a - b);
    const holders = order.slice(2).sort((a, b) => a - b);
    const jumper = holders[rng.int(0, 2)]!;
    const others = holders.filter((n) => n !== jumper);
    return {
      clients: [
        { name: 'A', description: 'allows 10% for clock drift (driftFactor 0.1)', driftFactor: 0.1 },
        { name: 'B', description: 'allows 10% for clock drift; asks every ~40 ms', driftFactor: 0.1 },
      ],
      resources: [
        { name: R1, description: 'part 1: a majority jumps ahead ~0.22 s (within the allowance)' },
        { name: R2, description: 'part 2: a majority jumps ahead ~1 s (far beyond it)' },
        { name: R3, description: "part 3: a single node jumps ahead ~2.25 s (A's key on all five)" },
        { name: R4, description: 'part 4: the same jump, A on a bare majority' },
      ],
      maxTtlMs: TTL,
      ttlMs: TTL,
      simulated: [
        "Clock jumps: the engine cuts what is left of A's key's TTL on the chosen nodes once, with PEXPIRE, as if their clocks had jumped ahead (an NTP step, an administrator setting the time, a VM resuming). No real clock is touched. Real drift — clocks running at slightly different rates — is far smaller, and is what the drift allowance is for.",
        'Part 4: the partition is real (a fault proxy holding packets); dropping the held packets is a real connection reset.',
      ],
      steps: [
        ...withinAllowance(m),
        ...beyondAllowance(m),
        ...oneNodeOnFive(single),
        ...oneNodeOnBareMajority(cut, holders, jumper, others),
      ],
    };
  },
};

/** Part 1: a majority jumps ahead ~0.22 s, within the drift allowance. */
function withinAllowance(m: NodeId[]): Step[] {
  return [
    cleanStep(),
    {
      id: 'a-1',
      do: 'acquire',
      who: 'A',
      resource: R1,
      ttlMs: TTL,
      // The run's first lock: its connections may still be opening (no reading pause before it at
      // REDLOCK_SCENARIO_READING_MS=0), and a first answer can be slow.
      retry: AFTER_RESTART,
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
  ];
}

/** Part 2: a majority jumps ahead ~1 s, far beyond the allowance. */
function beyondAllowance(m: NodeId[]): Step[] {
  return [
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
  ];
}

/** Part 3: a single node jumps ahead ~2.25 s while A's key is on all five. */
function oneNodeOnFive(single: NodeId): Step[] {
  return [
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
      say: `B asks over and over. One node cannot hand out the lock here, however far its clock jumped, only because A's key is on all five nodes: the other four still hold it.`,
    },
    {
      id: 'b-3-release',
      do: 'release',
      who: 'B',
      resource: R3,
      title: 'B releases',
      say: 'B releases. Part 4: the same jump on one node, but A holds only a bare majority.',
    },
  ];
}

/** Part 4: the same jump on one node of a bare majority; only the fence keeps A's late write out. */
function oneNodeOnBareMajority(cut: NodeId[], holders: NodeId[], jumper: NodeId, others: NodeId[]): Step[] {
  return [
    {
      id: 'p-bare',
      do: 'predict',
      title: 'Predict: one node, a bare majority',
      say: 'Part 4: A holds only three nodes, as in scenario 3.',
      question: `A will hold ledger-4 on ${nodeList(holders)} only: a bare majority. Then node ${jumper}'s clock alone jumps ahead ~2.25 s. Will B get ledger-4 while A still believes it holds it?`,
      choices: [
        { id: 'overlap', label: 'Yes: two holders at once' },
        { id: 'no-overlap', label: "No: B waits until A's validity is over" },
      ],
    },
    {
      id: 'bare-partition',
      do: 'node',
      action: { action: 'partition' },
      nodes: cut,
      chain: true,
      title: `Cut off ${nodeList(cut)}`,
      say: `${Nodes(cut)} are cut off from the clients for a moment, so A's lock will live on ${nodeList(holders)} only.`,
    },
    {
      id: 'a-4',
      do: 'acquire',
      who: 'A',
      resource: R4,
      ttlMs: TTL,
      chain: true,
      title: 'A locks on 3 nodes',
      say: `A asks all five nodes; ${nodeList(holders)} grant, which is a majority.`,
    },
    {
      id: 'bare-drop',
      do: 'node',
      action: { action: 'reset' },
      nodes: cut,
      chain: true,
      title: 'Drop the held packets',
      say: `The held packets are thrown away: ${nodeList(cut)} never see A's request.`,
    },
    {
      id: 'bare-heal',
      do: 'node',
      action: { action: 'heal' },
      nodes: cut,
      chain: true,
      title: `Heal ${nodeList(cut)}`,
      say: `The network heals: ${nodeList(cut)} are reachable again, and free.`,
    },
    {
      id: 'jump-bare',
      do: 'drift',
      who: 'A',
      resource: R4,
      nodes: [jumper],
      fastPercent: 300,
      chain: true,
      title: `Node ${jumper}: clock jumps ~2.25 s`,
      say: `Simulated clock jump: node ${jumper}'s clock jumps ahead by about 2.25 s, so its copy of A's key dies early.`,
    },
    {
      id: 'b-4',
      do: 'acquire',
      who: 'B',
      resource: R4,
      ttlMs: TTL,
      retry: B_RETRY,
      waitForNodes: cut,
      reveals: 'p-bare',
      revealBy: 'overlap',
      chain: true,
      title: 'B keeps asking',
      say: 'B asks over and over.',
      explain: {
        overlap: `Node ${jumper} dropped A's key early, and ${nodeList(cut)} never had it: three votes for B while ${nodeList(others)} still hold A's key and A is inside its validity. One node was enough, because it was the node A's and B's majorities share.`,
      },
    },
    {
      id: 'bare-fences',
      do: 'compare-fences',
      resource: R4,
      earlier: 'A',
      later: 'B',
      fact: 'fences-jump',
      factLabel: "Part 4: B's fence against A's",
      chain: true,
      title: 'Compare the fences',
      say: `The fence still goes up: node ${jumper} forgot A's key, not the fence it confirmed for A, so B's fence comes out above A's.`,
    },
    {
      id: 'b-4-writes',
      do: 'write',
      who: 'B',
      resource: R4,
      value: 'B: entry 1',
      chain: true,
      title: 'B writes',
      say: 'B writes to both stores with its fence.',
    },
    {
      id: 'a-4-writes',
      do: 'write',
      who: 'A',
      resource: R4,
      value: 'A: entry 1',
      chain: true,
      title: 'A writes',
      say: "A, still inside its validity, writes too. The plain store takes it over B's; the fenced store has seen B's higher fence and refuses it. Once two clients hold the lock, the fence is what keeps A's write out. The debate summary also names a way to stop it sooner: monitor the clocks and, when one jumps, \"alert and potentially block lock acquisitions\". This library's clock check does that blocking (a node whose clock jumps, forward or back, is quarantined), but this run moves no real clock — it shortens the key — so the check has nothing to see.",
    },
    {
      id: 'a-4-done',
      do: 'wait-validity',
      who: 'A',
      resource: R4,
      title: 'Both believe',
      say: "Both believe they hold ledger-4 until A's validity ends. Look at the checker.",
    },
    {
      id: 'a-4-release',
      do: 'release',
      who: 'A',
      resource: R4,
      chain: true,
      title: 'A releases',
      say: 'A releases (its lease is over).',
    },
    { id: 'b-4-release', do: 'release', who: 'B', resource: R4, chain: true, title: 'B releases', say: 'B releases.' },
  ];
}
