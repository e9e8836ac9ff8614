import type { ScenarioDefinition } from '../script';
import { cleanStep, OUTCOME_CHOICES as O } from './common';

const SINGLE = 'single/job';
const REDLOCK = 'redlock/job';
const BENCH = 'bench';
const PAIRS = 20;

export const efficiencyVsCorrectnessScenario: ScenarioDefinition = {
  id: 'efficiency-vs-correctness',
  number: 11,
  title: 'Do you need Redlock?',
  summary:
    'The same job guarded two ways on the real nodes: a single-instance lock on node 1, and Redlock over five. What each costs per acquire + release, measured, and what each survives: node 1 crashes.',
  lesson:
    'If the lock is for efficiency (a rare double run is harmless), a single Redis instance does the job: one server to run instead of five, but when that node is down nobody gets the lock, and a plain single-instance lock that loses its data lets two in. Redlock keeps granting through the loss of a minority of nodes. If the lock is for correctness, the debate summary\'s advice is "a consensus-based system like ZooKeeper or etcd, or a fencing token layer on top of Redlock": the storage checks the token (this library has one: scenarios 5 and 10).',
  estimatedSeconds: 8,
  tags: ['process faults', 'cost'],
  build: () => ({
    clients: [
      { name: 'S', description: 'a single-instance lock: the lock core configured with node 1 only', nodes: [1] },
      { name: 'R', description: 'Redlock over all five nodes' },
    ],
    resources: [
      { name: BENCH, description: 'the lock both take and release, in turns, to measure what it costs' },
      { name: SINGLE, description: "S's lock on the job" },
      { name: REDLOCK, description: "R's lock on the job" },
    ],
    maxTtlMs: 2_000,
    ttlMs: 2_000,
    simulated: [],
    steps: [
      cleanStep(),
      {
        id: 'measure',
        do: 'measure-locks',
        who: ['S', 'R'],
        resource: BENCH,
        ttlMs: 2_000,
        count: PAIRS,
        fact: 'cost',
        title: 'What each costs',
        say: `S is the lock core configured with one node, node 1: SET NX PX there and nowhere else, one vote its whole majority. R is Redlock over five. They take turns to acquire and release the same lock ${PAIRS} times each, with this library's defaults (a fencing token on both) and through the same fault proxies; the time of each pair is measured.`,
      },
      {
        id: 'p-single',
        do: 'predict',
        title: 'Predict: single instance',
        say: 'Node 1 is about to crash (SIGKILL).',
        question: 'Node 1 is down. Does S, the single-instance lock, get the lock?',
        choices: [O.granted, O.refused],
      },
      {
        id: 'p-redlock',
        do: 'predict',
        title: 'Predict: Redlock',
        say: 'The other four nodes are fine.',
        question: 'And R, Redlock over five, with node 1 down?',
        choices: [O.granted, O.refused],
      },
      {
        id: 'crash',
        do: 'node',
        action: { action: 'crash' },
        nodes: [1],
        chain: true,
        title: 'Node 1 crashes',
        say: 'Node 1 crashes: its process is killed.',
      },
      {
        id: 's-asks',
        do: 'acquire',
        who: 'S',
        resource: SINGLE,
        ttlMs: 2_000,
        reveals: 'p-single',
        revealBy: 'granted',
        chain: true,
        title: 'S asks',
        say: 'S asks its only node.',
        explain: {
          refused:
            'The lock core names this refusal QuorumUnavailableError: configured with node 1 alone, its majority is that one node, and node 1 cannot vote. One node is a single point of failure: while node 1 is down nobody gets the lock, and whoever held it has its only copy on a dead node. A plain SET NX lock restarted without its data would grant it to a second client at once; this core quarantines such a node for a lease ceiling (scenario 3), though an old snapshot with restart detection off still gets through (scenario 9).',
        },
      },
      {
        id: 'r-asks',
        do: 'acquire',
        who: 'R',
        resource: REDLOCK,
        ttlMs: 2_000,
        reveals: 'p-redlock',
        revealBy: 'granted',
        chain: true,
        title: 'R asks',
        say: 'R asks all five.',
        explain: {
          granted: 'Four votes of five are a majority: Redlock keeps granting through the loss of any minority of its nodes.',
        },
      },
      {
        id: 'r-releases',
        do: 'release',
        who: 'R',
        resource: REDLOCK,
        chain: true,
        title: 'R releases',
        say: 'R releases.',
      },
      {
        id: 'restart',
        do: 'node',
        action: { action: 'start' },
        nodes: [1],
        title: 'Node 1 comes back',
        say: 'Node 1 starts again; back from a crash it would sit out a lease ceiling before it votes again (scenario 2 shows it). So: a lock for efficiency can live on one node, one server to keep up instead of five. What each costs per lock is the measurement above: here the five nodes share one machine and answer in parallel, so the two come out close; across real machines Redlock waits for the third answer of five. Redlock buys locks that survive a minority of crashes. Neither stops a paused or delayed client by itself: for correctness the debate summary names ZooKeeper or etcd, or a fencing token the storage checks (scenarios 5 and 10).',
      },
    ],
  }),
};
