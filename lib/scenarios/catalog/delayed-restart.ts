import { nodeList, Nodes, pickNodes, type NodeId, type ScenarioDefinition, type Step } from '../script';
import { AFTER_RESTART, cleanStep, OUTCOME_CHOICES as O } from './common';

const R = 'ledger';
/**
 * The lease ceiling, and A's and B's TTL. Phase 1 shows a refusal only while A's lease or the
 * restarted nodes' quarantine (a lease ceiling from each process's start, less up to 1 s: whole
 * seconds of uptime) still runs when B asks; a crash, a restart replaying its AOF with an fsync on
 * every write and B's reconnection took 4.4-5.1 s on a loaded CI machine, past a 4 s ceiling (B
 * was rightly granted and the lesson lost). 8 s leaves B about 3 s more than that slow run needed.
 */
const TTL = 8_000;

export const delayedRestartScenario: ScenarioDefinition = {
  id: 'delayed-restart',
  number: 4,
  title: 'Delayed restart vs aof-always',
  summary:
    'A majority of nodes crashes twice while A holds the lock: first they restart at once with aof-always, then they come back empty after a delay of one lease ceiling. Both keep safety; a probe measures how long nobody could lock: about one lease ceiling in phase 1 (this lock core sits a crashed node out even with aof-always, where the distlock page would take it back at once) and one lease ceiling in phase 2 (the delay itself).',
  lesson:
    'The distlock page offers two ways through crash recovery: fsync every write, or keep a restarted node out until every lock it granted has expired. The first has a price the page spells out: fsync on every write "will totally ruin performances to the same level of CP systems that are traditionally used to implement distributed locks in a safe way", every write waiting for the disk, all the time and not only after a crash. After a crash this lock core takes the second way anyway: it cannot tell a node\'s own AOF from an older copy, so even an aof-always node sits out one lease ceiling. What fsync still buys is the data itself.',
  estimatedSeconds: 24,
  tags: ['process faults', 'persistence', 'availability'],
  build: (rng) => {
    const m = pickNodes(rng, 3);
    return {
      clients: [
        { name: 'A', description: 'a worker holding the ledger when the nodes crash' },
        { name: 'B', description: 'a second worker' },
        { name: 'P', description: 'a probe: asks for its own lock every 100 ms to time the outage' },
      ],
      resources: [
        { name: R, description: 'the resource A and B want' },
        { name: 'probe', description: "the probe's own lock" },
      ],
      maxTtlMs: TTL,
      ttlMs: TTL,
      simulated: [],
      steps: [...aofAlways(m), ...delayedRestart(m)],
    };
  },
};

/** Phase 1: the nodes run aof-always, its price measured; a majority crashes and restarts at once. */
function aofAlways(m: NodeId[]): Step[] {
  return [
    {
      id: 'persistence',
      do: 'ensure-persistence',
      mode: 'aof-always',
      title: 'Durable nodes',
      say: 'Phase 1 relies on aof-always: every write reaches the disk (fsync) before the node answers. It is the distlock page\'s "fsync=always", which the page warns "will totally ruin performances to the same level of CP systems that are traditionally used to implement distributed locks in a safe way": every write, lock or not, waits for the disk. The run makes sure every node runs that way.',
    },
    {
      id: 'fsync-cost',
      do: 'measure-fsync',
      nodes: [m[0]!],
      count: 200,
      fact: 'fsync-cost',
      factLabel: 'Time per write: fsync every write vs once a second',
      title: 'The price of aof-always',
      say: `First, the price, measured: node ${m[0]} takes 200 writes one after another with an fsync on every write, then 200 more with AOF's default, an fsync once a second (appendfsync everysec, put back right after). Each write's time includes its round trip, so the difference is the disk flush. How big it is depends on the disk under the node; this one is the machine the console runs on.`,
    },
    cleanStep(),
    {
      id: 'p-aof',
      do: 'predict',
      title: 'Predict: aof-always',
      say: 'Phase 1: crash and immediate restart with aof-always.',
      question: `A holds the ledger. ${Nodes(m)} — a majority — crash and restart at once with aof-always. B asks as soon as they are back. What happens?`,
      choices: [O.granted, O.refused],
    },
    {
      id: 'aof-a-acquires',
      do: 'acquire',
      who: 'A',
      resource: R,
      ttlMs: TTL,
      chain: true,
      title: 'A takes the ledger',
      say: 'A takes the ledger.',
    },
    {
      id: 'aof-crash',
      do: 'node',
      action: { action: 'crash' },
      nodes: m,
      mark: 'crash-1',
      chain: true,
      title: `Crash ${nodeList(m)}`,
      say: `${Nodes(m)} crash: a majority is gone, so nobody can lock anything.`,
    },
    {
      id: 'aof-start',
      do: 'node',
      action: { action: 'start', persistence: 'aof-always' },
      nodes: m,
      chain: true,
      title: 'Restart at once',
      say: "They restart at once and replay their AOF: A's key is back on them.",
    },
    {
      id: 'aof-b-asks',
      do: 'acquire',
      retry: AFTER_RESTART,
      who: 'B',
      resource: R,
      ttlMs: TTL,
      waitForNodes: m,
      reveals: 'p-aof',
      revealBy: 'granted',
      chain: true,
      title: 'B asks',
      say: 'B asks for the ledger.',
      explain: {
        refused:
          "The restarted nodes did replay A's key, but the lock core does not take a crashed node's word for it: each is a new redis-server process, and nothing on a node tells its own AOF from an older copy. They vote \"quarantined\" until a lease ceiling after their start, and the other two still hold A's key. Safe — and nobody can lock meanwhile. (Whether the refusal reads LockContended or QuorumUnavailable depends on which votes arrive first: the core stops counting once the outcome is settled.)",
      },
    },
    {
      id: 'aof-probe',
      do: 'probe',
      who: 'P',
      resource: 'probe',
      since: 'crash-1',
      fact: 'outage-aof',
      factLabel: 'Outage with aof-always',
      chain: true,
      title: 'Probe',
      say: 'The probe asks for its own lock every 100 ms until it is granted.',
    },
    {
      id: 'aof-a-releases',
      do: 'release',
      who: 'A',
      resource: R,
      title: 'A releases',
      say: 'A releases: its lease ran out while the nodes sat out, so there is nothing left to delete.',
    },
  ];
}

/** Phase 2: a majority crashes and comes back empty only after one lease ceiling. */
function delayedRestart(m: NodeId[]): Step[] {
  return [
    {
      id: 'p-delayed',
      do: 'predict',
      title: 'Predict: delayed restart',
      say: 'Phase 2: the same nodes crash, and come back empty — but only after a delay.',
      question: `A holds the ledger again. ${Nodes(m)} crash and restart WITHOUT persistence after ${TTL / 1000} s (the lease ceiling). While they are away, can B lock the ledger?`,
      choices: [O.granted, O.contended, O.unavailable],
    },
    {
      id: 'delayed-a-acquires',
      do: 'acquire',
      retry: AFTER_RESTART,
      who: 'A',
      resource: R,
      ttlMs: TTL,
      chain: true,
      title: 'A takes the ledger',
      say: 'A takes the ledger.',
    },
    {
      id: 'delayed-crash',
      do: 'node',
      action: { action: 'crash' },
      nodes: m,
      mark: 'crash-2',
      chain: true,
      title: `Crash ${nodeList(m)}`,
      say: `${Nodes(m)} crash again.`,
    },
    {
      id: 'delayed-schedule',
      do: 'node',
      action: { action: 'restart', persistence: 'none', delayMs: TTL },
      nodes: m,
      chain: true,
      title: 'Schedule a delayed restart',
      say: `They will restart by themselves in ${TTL / 1000} s, empty: the distlock page's "delayed restart", which keeps a crashed node away for "a bit more than the max TTL" (here the TTL, plus the time a restart takes).`,
    },
    {
      id: 'delayed-b-asks',
      do: 'acquire',
      who: 'B',
      resource: R,
      ttlMs: TTL,
      reveals: 'p-delayed',
      chain: true,
      title: 'B asks',
      say: 'B asks while they are away.',
      explain: {
        QuorumUnavailableError: "Only two nodes answer, and they hold A's key: no majority. Nobody can lock until the delay is over.",
      },
    },
    {
      id: 'delayed-wait',
      do: 'wait-nodes-up',
      nodes: m,
      title: 'Wait out the delay',
      say: "The cluster waits out the delay. A's lease ends while the nodes are away.",
    },
    {
      ...cleanStep('delayed-clean'),
      chain: true,
      title: 'Back, empty: mark clean',
      say: 'They are back, empty. They were away for the whole lease ceiling, so every lock they had granted has expired: marking them clean is safe. (Without it the lock core would quarantine them for another lease ceiling — it cannot know how long a node was down.)',
    },
    {
      id: 'delayed-probe',
      do: 'probe',
      who: 'P',
      resource: 'probe',
      since: 'crash-2',
      fact: 'outage-delayed',
      factLabel: 'Outage with a delayed restart',
      chain: true,
      title: 'Probe',
      say: 'The probe asks again.',
    },
    {
      id: 'delayed-b-acquires',
      do: 'acquire',
      retry: AFTER_RESTART,
      who: 'B',
      resource: R,
      ttlMs: TTL,
      waitForNodes: m,
      chain: true,
      title: 'B takes the ledger',
      say: "B asks again and wins: A's lease ended while the nodes were away, so there is no conflict. Safe — at the price of the outage.",
    },
    {
      id: 'delayed-b-releases',
      do: 'release',
      who: 'B',
      resource: R,
      title: 'B releases',
      say: "B releases. Compare the two outages in the results: close to one lease ceiling each time. aof-always brought A's key back, but this lock core does not rely on it after a crash, and its price — a disk flush on every write — is paid all the time, not only after a crash.",
    },
  ];
}
