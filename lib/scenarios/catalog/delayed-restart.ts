import { nodeList, Nodes, pickNodes, type ScenarioDefinition } from '../script';
import { AFTER_RESTART, cleanStep, OUTCOME_CHOICES as O } from './common';

const R = 'ledger';
const TTL = 4_000;

export const delayedRestartScenario: ScenarioDefinition = {
  id: 'delayed-restart',
  number: 4,
  title: 'Delayed restart vs aof-always',
  summary: 'A majority of nodes crashes twice while A holds the lock: first they restart at once with aof-always, then they come back empty after a delay of one lease ceiling. Both keep safety; a probe measures how long nobody could lock — about a lease ceiling both times.',
  lesson: 'The distlock page offers two ways through crash recovery: fsync every write, or keep a restarted node out until every lock it granted has expired. After a crash this lock core always takes the second: it cannot tell a node\'s own AOF from an older copy, so even an aof-always node sits out one lease ceiling. What fsync still buys is the data itself.',
  estimatedSeconds: 15,
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
        { name: 'probe', description: 'the probe\'s own lock' },
      ],
      maxTtlMs: TTL,
      ttlMs: TTL,
      simulated: [],
      steps: [
        { id: 'persistence', do: 'ensure-persistence', mode: 'aof-always', title: 'Durable nodes',
          say: 'Phase 1 relies on aof-always: every write reaches the disk (fsync) before the node answers. The run makes sure every node runs that way.' },
        cleanStep(),
        { id: 'p-aof', do: 'predict', title: 'Predict: aof-always', say: 'Phase 1: crash and immediate restart with aof-always.',
          question: `A holds the ledger. ${Nodes(m)} — a majority — crash and restart at once with aof-always. B asks as soon as they are back. What happens?`,
          choices: [O.granted, O.refused] },
        { id: 'aof-a-acquires', do: 'acquire', who: 'A', resource: R, ttlMs: TTL, chain: true, title: 'A takes the ledger', say: 'A takes the ledger.' },
        { id: 'aof-crash', do: 'node', action: { action: 'crash' }, nodes: m, mark: 'crash-1', chain: true, title: `Crash ${nodeList(m)}`,
          say: `${Nodes(m)} crash: a majority is gone, so nobody can lock anything.` },
        { id: 'aof-start', do: 'node', action: { action: 'start', persistence: 'aof-always' }, nodes: m, chain: true, title: 'Restart at once',
          say: 'They restart at once and replay their AOF: A\'s key is back on them.' },
        { id: 'aof-b-asks', do: 'acquire', retry: AFTER_RESTART, who: 'B', resource: R, ttlMs: TTL, waitForNodes: m, reveals: 'p-aof', revealBy: 'granted', chain: true,
          title: 'B asks', say: 'B asks for the ledger.',
          explain: { refused: 'The restarted nodes did replay A\'s key, but the lock core does not take a crashed node\'s word for it: each is a new redis-server process, and nothing on a node tells its own AOF from an older copy. They vote "quarantined" until a lease ceiling after their start, and the other two still hold A\'s key. Safe — and nobody can lock meanwhile. (Whether the refusal reads LockContended or QuorumUnavailable depends on which votes arrive first: the core stops counting once the outcome is settled.)' } },
        { id: 'aof-probe', do: 'probe', who: 'P', resource: 'probe', since: 'crash-1', fact: 'outage-aof', factLabel: 'Outage with aof-always', chain: true,
          title: 'Probe', say: 'The probe asks for its own lock every 100 ms until it is granted.' },
        { id: 'aof-a-releases', do: 'release', who: 'A', resource: R, title: 'A releases',
          say: 'A releases: its lease ran out while the nodes sat out, so there is nothing left to delete.' },
        { id: 'p-delayed', do: 'predict', title: 'Predict: delayed restart', say: 'Phase 2: the same nodes crash, and come back empty — but only after a delay.',
          question: `A holds the ledger again. ${Nodes(m)} crash and restart WITHOUT persistence after ${TTL / 1000} s (the lease ceiling). While they are away, can B lock the ledger?`,
          choices: [O.granted, O.contended, O.unavailable] },
        { id: 'delayed-a-acquires', do: 'acquire', retry: AFTER_RESTART, who: 'A', resource: R, ttlMs: TTL, chain: true, title: 'A takes the ledger', say: 'A takes the ledger.' },
        { id: 'delayed-crash', do: 'node', action: { action: 'crash' }, nodes: m, mark: 'crash-2', chain: true, title: `Crash ${nodeList(m)}`,
          say: `${Nodes(m)} crash again.` },
        { id: 'delayed-schedule', do: 'node', action: { action: 'restart', persistence: 'none', delayMs: TTL }, nodes: m, chain: true, title: 'Schedule a delayed restart',
          say: `They will restart by themselves in ${TTL / 1000} s, empty: the seeds' "delayed restart".` },
        { id: 'delayed-b-asks', do: 'acquire', who: 'B', resource: R, ttlMs: TTL, reveals: 'p-delayed', chain: true, title: 'B asks',
          say: 'B asks while they are away.',
          explain: { QuorumUnavailableError: 'Only two nodes answer, and they hold A\'s key: no majority. Nobody can lock until the delay is over.' } },
        { id: 'delayed-wait', do: 'wait-nodes-up', nodes: m, title: 'Wait out the delay',
          say: 'The cluster waits out the delay. A\'s lease ends while the nodes are away.' },
        { ...cleanStep('delayed-clean'), chain: true, title: 'Back, empty: mark clean',
          say: 'They are back, empty. They were away for the whole lease ceiling, so every lock they had granted has expired: marking them clean is safe. (Without it the lock core would quarantine them for another lease ceiling — it cannot know how long a node was down.)' },
        { id: 'delayed-probe', do: 'probe', who: 'P', resource: 'probe', since: 'crash-2', fact: 'outage-delayed', factLabel: 'Outage with a delayed restart', chain: true,
          title: 'Probe', say: 'The probe asks again.' },
        { id: 'delayed-b-acquires', do: 'acquire', retry: AFTER_RESTART, who: 'B', resource: R, ttlMs: TTL, waitForNodes: m, chain: true, title: 'B takes the ledger',
          say: 'B asks again and wins: A\'s lease ended while the nodes were away, so there is no conflict. Safe — at the price of the outage.' },
        { id: 'delayed-b-releases', do: 'release', who: 'B', resource: R, title: 'B releases',
          say: 'B releases. Compare the two outages in the results: close to one lease ceiling each time.' },
      ],
    };
  },
};
