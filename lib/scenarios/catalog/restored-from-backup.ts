import { nodeList, Nodes, type NodeId, type ScenarioDefinition, type Step } from '../script';
import { AFTER_RESTART, cleanStep, OUTCOME_CHOICES as O } from './common';

const ON = 'detection-on/ledger';
const OFF = 'detection-off/ledger';
const TTL = 4_000;

/**
 * One phase: node `c` is backed up (the step before), `holder` locks on a bare majority that
 * includes node `c`, node `c` is restored in place from that backup while it runs, `asker` asks.
 * From the partition to the ask nothing pauses: the holder's lease is running.
 */
function phase(p: { tag: string; asker: string; resource: string; cut: NodeId[]; c: NodeId; holders: NodeId[]; safe: boolean }): Step[] {
  const { tag, asker, resource, cut, c, holders } = p;
  const others = holders.filter((n) => n !== c);
  return [
    {
      id: `${tag}-partition`,
      do: 'node',
      action: { action: 'partition' },
      nodes: cut,
      chain: true,
      title: `Cut off ${nodeList(cut)}`,
      say: `${Nodes(cut)} cannot hear the clients for a moment, so A's lock will sit on ${nodeList(holders)} only: three of five, just enough.`,
    },
    {
      id: `${tag}-a-acquires`,
      do: 'acquire',
      who: 'A',
      resource,
      ttlMs: TTL,
      chain: true,
      title: 'A locks on 3 nodes',
      say: `A sends its request to all five nodes; ${nodeList(holders)} say yes, and three is a majority.`,
    },
    {
      id: `${tag}-drop`,
      do: 'node',
      action: { action: 'reset' },
      nodes: cut,
      chain: true,
      title: 'Drop the held packets',
      say: `The held packets are thrown away: ${nodeList(cut)} never see A's request.`,
    },
    {
      id: `${tag}-heal`,
      do: 'node',
      action: { action: 'heal' },
      nodes: cut,
      chain: true,
      title: `Heal ${nodeList(cut)}`,
      say: `The network is whole again. ${Nodes(cut)} are reachable and hold nothing for the ledger.`,
    },
    {
      id: `${tag}-restore`,
      do: 'restore-backup',
      nodes: [c],
      chain: true,
      title: `Node ${c} restored from the backup`,
      say: `While node ${c} runs, its data is replaced in place by the backup: the same redis-server process, no restart, no crash. A's key was not in the backup, so node ${c} has forgotten it. The epoch sentinel was in it, so it is back, still saying "nothing lost here".`,
    },
    {
      id: `${tag}-${asker.toLowerCase()}-asks`,
      do: 'acquire',
      retry: AFTER_RESTART,
      who: asker,
      resource,
      ttlMs: TTL,
      waitForNodes: cut,
      reveals: `p-${tag}`,
      revealBy: 'granted',
      chain: true,
      title: `${asker} asks`,
      say: `${asker} asks for the ledger while A still believes it holds it.`,
      explain: p.safe
        ? {
            refused: `What the lock core saw: node ${c}'s sentinel looks clean and names the process running there, but that process has run a SWAPDB since the sentinel's count of data-replacing commands was taken — the backup brought the old count back with the old data. Data that went back in time may have forgotten locks, so node ${c} votes "quarantined" (rollback) for one lease ceiling. ${Nodes(others)} still hold A's key: ${asker} can count on the two free nodes at most, no majority.`,
            granted: `Node ${c}'s vote counted for ${asker}: the rollback went unseen. That is a failure of the node checks; the checker shows what it costs.`,
          }
        : {
            granted: `With its node checks off, ${asker}'s lock core only looks for a missing sentinel. Node ${c}'s is there and looks clean, so ${asker} takes node ${c}'s word. Nodes ${[c, ...cut].sort((a, b) => a - b).join(', ')} are free: three votes for ${asker} while A still counts on ${nodeList(others)}. Two holders at once: the checker turns red.`,
            refused: `${asker} was refused: ${asker}'s own checks are off, so look at the votes for why (a slow node, or a quarantine the node recorded for another client).`,
          },
    },
  ];
}

export const restoredFromBackupScenario: ScenarioDefinition = {
  id: 'restored-from-backup',
  number: 12,
  title: 'Restored from a backup while running',
  summary:
    "A node's data is restored in place from a backup taken before the lock it granted: the same redis-server process, no restart. With the lock core's node checks on (the default), the node sits out one lease ceiling, because its process counted the restore; with them off, a second client gets the lock while the first still holds it, with a fence no higher.",
  lesson:
    'A restore in place takes a node\'s data back in time without a restart, so there is no new process to give it away, and the sentinel comes back from the backup still saying "nothing lost here". The evidence is in the process, not in the data: redis-server counts every command that replaces data wholesale (INFO commandstats: SWAPDB, DEBUG RELOAD, REPLICAOF, FLUSHALL, RESTORE), and the sentinel keeps the count from the last check. When the count has moved, the lock core keeps the node out of every vote for one lease ceiling — the distlock page\'s delayed restart, applied to a rollback.',
  estimatedSeconds: 20,
  tags: ['process faults', 'backups', 'node checks'],
  build: (rng) => {
    const order = rng.shuffle([1, 2, 3, 4, 5]) as NodeId[];
    const cut = order.slice(0, 2).sort((a, b) => a - b) as NodeId[];
    const holders = order.slice(2).sort((a, b) => a - b) as NodeId[];
    const c = order[2 + rng.int(0, 2)]!;
    const others = holders.filter((n) => n !== c);
    return {
      clients: [
        { name: 'A', description: 'holds the ledger in both phases (the default settings)' },
        { name: 'B', description: 'node checks on (the default)' },
        { name: 'C', description: 'node checks OFF (nodeChecks: false, explicitly unsafe)', nodeChecks: false },
      ],
      resources: [
        { name: ON, description: 'phase 1: B asks with the node checks on' },
        { name: OFF, description: 'phase 2: C asks with the node checks off' },
      ],
      maxTtlMs: TTL,
      ttlMs: TTL,
      simulated: [
        `The backup and the restore are staged by the engine on node ${c} itself. The backup copies this run's keys into node ${c}'s spare database (COPY … DB 1). The restore is one script: it copies every other key node ${c} holds into that database as it stands, swaps the two databases (SWAPDB) and empties the spare one. So only this run's keys go back in time; a real restore would take all of node ${c}'s data back to the backup. The SWAPDB is real: node ${c}'s redis-server runs it, and counts it.`,
        "Why SWAPDB, of the ways to restore a running node in place (REPLICAOF a server loaded from the backup, then REPLICAOF NO ONE; DEBUG RELOAD of an older dump; SWAPDB): the sandbox's nodes run without --enable-debug-command, so DEBUG RELOAD is refused; a side server would be a redis-server outside the supervisor that owns the nodes, and its full sync would take back everything the node holds, the console's own data included. The lock core counts all three alike.",
        'The partition is real (a fault proxy holding packets); dropping the held packets is a real connection reset.',
      ],
      steps: [...checksOn(cut, holders, c, others), ...checksOff(cut, holders, c)],
    };
  },
};

/** Phase 1: node checks on — the restore in place is found and the node sits out. */
function checksOn(cut: NodeId[], holders: NodeId[], c: NodeId, others: NodeId[]): Step[] {
  return [
    cleanStep('clean', [...cut, ...holders]),
    {
      id: 'b-warms-up',
      do: 'acquire',
      who: 'B',
      resource: ON,
      ttlMs: TTL,
      title: 'B uses the ledger',
      say: "Business as usual: B takes the ledger. On its first contact with each node, B's lock core checked it and wrote down in the node's epoch sentinel what it found: which redis-server process runs there, and how many commands that replace data wholesale (SWAPDB, DEBUG RELOAD, REPLICAOF, FLUSHALL, RESTORE…) that process has run so far.",
    },
    {
      id: 'b-warm-releases',
      do: 'release',
      who: 'B',
      resource: ON,
      chain: true,
      title: 'B releases',
      say: 'B releases the ledger.',
    },
    {
      id: 'on-backup',
      do: 'backup',
      nodes: [c],
      title: `Back up node ${c}`,
      say: `An operator backs node ${c} up. The copy holds this run's keys as they are now: the sentinel, saying "nothing lost here", with B's count of data-replacing commands in it, and node ${c}'s fence register.`,
    },
    {
      id: 'p-on',
      do: 'predict',
      title: 'Predict: node checks on',
      say: "Phase 1: client B runs the lock core's defaults, node checks on.",
      question: `A will hold the ledger on ${nodeList(holders)} only. Node ${c} is then restored in place from the backup taken before A's lock: no restart, no crash. B asks: does B get the ledger?`,
      choices: [O.granted, O.refused],
    },
    ...phase({ tag: 'on', asker: 'B', resource: ON, cut, c, holders, safe: true }),
    {
      id: 'on-sit-out',
      do: 'wait-quarantine',
      nodes: [c],
      fact: { id: 'sat-out', label: `Node ${c} sat out, counted from the restore` },
      title: `Node ${c} sits out`,
      say: `Node ${c} stays out of every vote until one lease ceiling (${TTL / 1000} s) has passed since the check that found the rollback. No lock it granted under this prefix can outlive that, so every lock it may have forgotten — A's included — has expired by then. The evidence was in the process, so every client of node ${c} sees it, whatever its key prefix: the console's own lock core keeps node ${c} out too, from its next check.`,
    },
    {
      id: 'on-a-lease',
      do: 'wait-validity',
      who: 'A',
      resource: ON,
      chain: true,
      title: "A's lease is over",
      say: "A's lease, granted before the restore, has run out too.",
    },
    {
      id: 'on-a-releases',
      do: 'release',
      who: 'A',
      resource: ON,
      chain: true,
      title: 'A releases',
      say: 'A releases (its lease is over).',
    },
    {
      id: 'on-b-acquires',
      do: 'acquire',
      who: 'B',
      resource: ON,
      ttlMs: TTL,
      chain: true,
      title: 'B asks again',
      say: `B asks again, now that A's lease is over and node ${c} no longer sits out.`,
    },
    {
      id: 'on-fences',
      do: 'compare-fences',
      resource: ON,
      earlier: 'A',
      later: 'B',
      fact: 'fences-on',
      factLabel: "Phase 1: B's fence against A's",
      chain: true,
      title: 'Compare the fences',
      say: `B's fence is above A's: the check that found the rollback also raised node ${c}'s register above any fence handed out before it, and ${nodeList(others)} still remember A's.`,
    },
    {
      id: 'on-b-releases',
      do: 'release',
      who: 'B',
      resource: ON,
      title: 'B releases',
      say: 'B releases. Phase 1 never had two holders: its checker lane stayed green.',
    },
  ];
}

/** Phase 2: the same restore with node checks off, the negative control. */
function checksOff(cut: NodeId[], holders: NodeId[], c: NodeId): Step[] {
  return [
    {
      ...cleanStep('clean-2', [...cut, ...holders]),
      title: 'Phase 2: a clean start',
      say: 'Phase 2: the same story with client C, whose node checks are OFF (nodeChecks: false) — an explicitly unsafe setting, the negative control. C still honours a quarantine a node records and still notices a node that lost its sentinel; it no longer looks for restarts, rollbacks or clock jumps. The engine marks every node clean again — true: nobody holds anything under this prefix.',
    },
    {
      id: 'off-a-warms-up',
      do: 'acquire',
      who: 'A',
      resource: OFF,
      ttlMs: TTL,
      chain: true,
      title: 'A uses the ledger',
      say: "A takes the ledger for a moment. Its lock core checks every node again after the clean start and writes down each process's count of data-replacing commands, as B's did in phase 1: a client with the node checks on would catch the restore to come just the same.",
    },
    {
      id: 'off-a-warm-releases',
      do: 'release',
      who: 'A',
      resource: OFF,
      chain: true,
      title: 'A releases',
      say: 'A releases the ledger.',
    },
    {
      id: 'off-backup',
      do: 'backup',
      nodes: [c],
      title: `Back up node ${c} again`,
      say: `Node ${c} is backed up again: this run's keys as they are now, the sentinel and its count included.`,
    },
    {
      id: 'p-off',
      do: 'predict',
      title: 'Predict: node checks off',
      say: 'Client C runs with its node checks off.',
      question: `A will hold the ledger on ${nodeList(holders)}; node ${c} is restored again from the backup just taken. C asks with its node checks off: does C get the ledger?`,
      choices: [O.granted, O.refused],
    },
    ...phase({ tag: 'off', asker: 'C', resource: OFF, cut, c, holders, safe: false }),
    {
      id: 'off-fences',
      do: 'compare-fences',
      resource: OFF,
      earlier: 'A',
      later: 'C',
      fact: 'fences-off',
      factLabel: "Phase 2: C's fence against A's",
      chain: true,
      title: 'Compare the fences',
      say: `Fencing does not catch it either. A later grant gets a higher fence only because any two majorities share a node that remembers the earlier grant. The one node A's and C's majorities share is node ${c}, and its register came back from the backup as old as its data: C's fence is not above A's.`,
    },
    {
      id: 'off-both',
      do: 'wait-validity',
      who: 'A',
      resource: OFF,
      title: 'Both believe',
      say: "A and C both count the ledger as theirs until A's validity runs out. Look at the checker.",
    },
    {
      id: 'off-a-releases',
      do: 'release',
      who: 'A',
      resource: OFF,
      chain: true,
      title: 'A releases',
      say: 'A releases (its lease is over).',
    },
    { id: 'off-c-releases', do: 'release', who: 'C', resource: OFF, chain: true, title: 'C releases', say: 'C releases.' },
  ];
}
