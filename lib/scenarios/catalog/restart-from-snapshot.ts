import { nodeList, Nodes, type NodeId, type ScenarioDefinition, type Step } from '../script';
import { AFTER_RESTART, cleanStep, OUTCOME_CHOICES as O } from './common';

const OFF = 'detection-off/ledger';
const ON = 'detection-on/ledger';
const TTL = 4_000;

/**
 * One phase: `holder` locks on a bare majority that includes node `c`, node `c` crashes and comes
 * back from the snapshot it saved before that lock, `asker` asks. The snapshot step comes before.
 */
function phase(p: {
  tag: string;
  holder: string;
  asker: string;
  resource: string;
  cut: NodeId[];
  c: NodeId;
  holders: NodeId[];
  safe: boolean;
}): Step[] {
  const { tag, holder, asker, resource, cut, c, holders } = p;
  const others = holders.filter((n) => n !== c);
  const quarantinedWhy = `Node ${c}'s sentinel names the redis-server process that saved the snapshot, and INFO says another process runs now: the node restarted, so what it holds may be older than what it promised. It votes "quarantined" until ${TTL / 1000} s after its process started.`;
  return [
    {
      id: `${tag}-partition`,
      do: 'node',
      action: { action: 'partition' },
      nodes: cut,
      chain: true,
      title: `Cut off ${nodeList(cut)}`,
      say: `${Nodes(cut)} cannot hear the clients for a moment, so ${holder}'s lock will sit on ${nodeList(holders)} only: three of five, just enough.`,
    },
    {
      id: `${tag}-holder-acquires`,
      do: 'acquire',
      who: holder,
      resource,
      ttlMs: TTL,
      chain: true,
      title: `${holder} locks on 3 nodes`,
      say: `${holder} sends its request to all five nodes; ${nodeList(holders)} say yes, and three is a majority.`,
    },
    {
      id: `${tag}-drop`,
      do: 'node',
      action: { action: 'reset' },
      nodes: cut,
      chain: true,
      title: 'Drop the held packets',
      say: `The held packets are thrown away: ${nodeList(cut)} never see ${holder}'s request.`,
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
      id: `${tag}-crash`,
      do: 'node',
      action: { action: 'crash' },
      nodes: [c],
      chain: true,
      title: `Crash node ${c}`,
      say: `Node ${c}, one of the three nodes that hold ${holder}'s key, is killed (SIGKILL: no chance to save anything)…`,
    },
    {
      id: `${tag}-restart`,
      do: 'node',
      action: { action: 'start', persistence: 'rdb' },
      nodes: [c],
      chain: true,
      title: `Node ${c} back from its snapshot`,
      say: `…and starts again, reading the snapshot it saved before ${holder} locked. ${holder}'s key was never in that file, so it is gone. The epoch sentinel was in it, so it is back, still saying "nothing lost here".`,
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
      title: `${asker} asks`,
      say: `${asker} asks for the ledger while ${holder} still believes it holds it.`,
      explain: p.safe
        ? {
            LockContendedError: `${quarantinedWhy} ${Nodes(others)} still hold ${holder}'s key, so ${asker} can count on the two free nodes at most: no majority. The core names the refusal after ${holder}'s keys: had ${nodeList(others)} been free, ${asker} would have had one.`,
            QuorumUnavailableError: `${quarantinedWhy} ${Nodes(others)} still hold ${holder}'s key, which leaves ${asker} with the two free nodes: no majority.`,
          }
        : {
            granted: `With only a missing sentinel to look for, ${asker} takes node ${c}'s word. Nodes ${c}, ${cut.join(' and ')} are free, so ${asker} has three votes while ${holder} still counts on ${nodeList(others)}. Two holders at once: the checker turns red.`,
          },
    },
  ];
}

export const restartFromSnapshotScenario: ScenarioDefinition = {
  id: 'restart-from-snapshot',
  number: 9,
  title: 'Restart from an old snapshot',
  summary:
    "A node on Redis's default persistence (RDB snapshots, no append-only file) crashes and comes back with a snapshot taken before the lock it granted. With restart detection off, a second client gets the lock while the first still holds it, with a fence no higher; with detection on (the default), the restarted node sits out one lease ceiling.",
  lesson:
    'A snapshot is a copy of the past: a node that reloads one has forgotten the locks it granted since, yet its sentinel looks clean. What gives it away is the new redis-server process. The lock core then keeps the node out of every vote until a lease ceiling has passed since that process started — the distlock page\'s delayed restart, applied to the votes. "Default" here is Redis\'s out-of-the-box persistence, RDB snapshots; the distlock page\'s "configured, as by default, to fsync on disk every second" is the default of AOF once AOF is switched on (appendfsync everysec), which loses about a second at most, where a snapshot loses everything since it was taken.',
  estimatedSeconds: 26,
  tags: ['process faults', 'persistence', 'restart detection'],
  build: (rng) => {
    const order = rng.shuffle([1, 2, 3, 4, 5]) as NodeId[];
    const cut = order.slice(0, 2).sort((a, b) => a - b) as NodeId[];
    const holders = order.slice(2).sort((a, b) => a - b) as NodeId[];
    const c = order[2 + rng.int(0, 2)]!;
    return {
      clients: [
        { name: 'A', description: 'holds the ledger in both phases (the default settings)' },
        { name: 'B', description: 'restart detection OFF (nodeChecks: false, explicitly unsafe)', nodeChecks: false },
        { name: 'C', description: 'restart detection on (the default)' },
      ],
      resources: [
        { name: OFF, description: 'phase 1: B asks with restart detection off' },
        { name: ON, description: 'phase 2: C asks with restart detection on' },
      ],
      maxTtlMs: TTL,
      ttlMs: TTL,
      simulated: [
        `Node ${c}'s snapshots are taken on cue: the engine sends SAVE. Left to the default save points, Redis snapshots after an hour if one key changed, after 5 minutes if 100 did, after a minute if 10,000 did — so a real node's last snapshot is usually older than this one, which only widens the gap.`,
        `The nodes are marked clean one at a time, ${nodeList(cut)} first. A fence register starts from the node's clock when it is marked, so this keeps theirs from starting a millisecond ahead of the others; in a cluster that has run for a while they would simply be behind, having never seen A's lock. Without it, B's fence could come out above A's by luck.`,
        'The partition is real (a fault proxy holding packets); dropping the held packets is a real connection reset; the crash is a real SIGKILL of redis-server.',
      ],
      steps: [...detectionOff(cut, holders, c), ...detectionOn(cut, holders, c)],
    };
  },
};

/** Phase 1: restart detection off (the negative control) — the restart from an old snapshot gives two holders. */
function detectionOff(cut: NodeId[], holders: NodeId[], c: NodeId): Step[] {
  return [
    {
      id: 'persistence',
      do: 'ensure-persistence',
      mode: 'rdb',
      nodes: [c],
      title: `Node ${c} on the default persistence`,
      say: `Node ${c} is restarted to run as a freshly installed Redis does: RDB snapshots at the default save points, no append-only file. The other nodes keep their persistence.`,
    },
    cleanStep('clean', [...cut, ...holders]),
    {
      id: 'off-snapshot',
      do: 'snapshot',
      nodes: [c],
      title: `Node ${c} saves a snapshot`,
      say: `Node ${c} writes its snapshot to disk now. The file holds this run's sentinel ("clean") and the node's fence register as they stand; whatever the node is told from here on lives only in memory until the next snapshot.`,
    },
    {
      id: 'p-off',
      do: 'predict',
      title: 'Predict: detection off',
      say: 'Phase 1: client B runs with restart detection OFF (nodeChecks: false) — an explicitly unsafe setting, the negative control.',
      question: `A will hold the ledger on nodes ${holders.join(', ')} only. Node ${c} then crashes and restarts from the snapshot it saved before A's lock. With restart detection OFF, what happens when B asks?`,
      choices: [O.granted, O.contended, O.unavailable],
    },
    ...phase({ tag: 'off', holder: 'A', asker: 'B', resource: OFF, cut, c, holders, safe: false }),
    {
      id: 'off-fences',
      do: 'compare-fences',
      resource: OFF,
      earlier: 'A',
      later: 'B',
      fact: 'fences-off',
      factLabel: "Phase 1: B's fence against A's",
      chain: true,
      title: 'Compare the fences',
      say: `Fencing does not catch it either. A later grant gets a higher fence only because any two majorities share a node that remembers the earlier grant. The one node A's and B's majorities share is node ${c}, and its register came back from the snapshot as old as its data: B's fence is not above A's.`,
    },
    {
      id: 'off-b-writes',
      do: 'write',
      who: 'B',
      resource: OFF,
      value: 'B: entry 1',
      chain: true,
      title: 'B writes',
      say: 'B writes to the storage behind the lock. The fenced store has seen no fence yet in this phase, so it accepts.',
    },
    {
      id: 'off-a-writes',
      do: 'write',
      who: 'A',
      resource: OFF,
      value: 'A: entry 1',
      chain: true,
      title: 'A writes',
      say: "A, still inside its validity, writes too. Had B's fence been above A's, the fenced store would refuse A now. It is not. If A's fence is higher, the store takes A's write: both writers get through. If the two are equal, the store sees two holders with one number: it refuses A's write and reports a tie, which is itself a failure of fencing (a fence is supposed to name one holder).",
    },
    {
      id: 'off-both',
      do: 'wait-validity',
      who: 'A',
      resource: OFF,
      title: 'Both believe',
      say: "A and B both count the ledger as theirs until A's validity runs out. Look at the checker.",
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
    { id: 'off-b-releases', do: 'release', who: 'B', resource: OFF, chain: true, title: 'B releases', say: 'B releases.' },
  ];
}

/** Phase 2: restart detection on (the default) — the restarted node sits out and the fence stays above. */
function detectionOn(cut: NodeId[], holders: NodeId[], c: NodeId): Step[] {
  return [
    {
      ...cleanStep('clean-2', [...cut, ...holders]),
      title: 'Phase 2: a clean start',
      say: "Phase 2: the same story with restart detection ON, the lock core's default. The engine marks every node clean again, for the redis-server process each one runs now — true: nobody holds anything under this prefix.",
    },
    {
      id: 'on-snapshot',
      do: 'snapshot',
      nodes: [c],
      title: `Node ${c} saves a snapshot`,
      say: `Node ${c} saves a fresh snapshot. Its sentinel now names the process running at this moment.`,
    },
    {
      id: 'p-on',
      do: 'predict',
      title: 'Predict: detection on',
      say: 'Client C runs with restart detection on.',
      question: `A will hold the ledger on nodes ${holders.join(', ')}; node ${c} crashes again and restarts from the snapshot it just saved. With restart detection ON, what happens when C asks?`,
      choices: [O.granted, O.contended, O.unavailable],
    },
    ...phase({ tag: 'on', holder: 'A', asker: 'C', resource: ON, cut, c, holders, safe: true }),
    {
      id: 'on-sit-out',
      do: 'wait-quarantine',
      nodes: [c],
      fact: { id: 'sat-out', label: `Node ${c} sat out, counted from its restart` },
      title: `Node ${c} sits out`,
      say: `Node ${c} stays out of every vote until one lease ceiling (${TTL / 1000} s) has passed since its new process started. Every lock it granted before the crash had a ttl of at most that, so each of them — A's included — has expired by then.`,
    },
    {
      id: 'on-a-lease',
      do: 'wait-validity',
      who: 'A',
      resource: ON,
      chain: true,
      title: "A's lease is over",
      say: "A's lease, granted before the crash, has run out too.",
    },
    {
      id: 'on-c-acquires',
      do: 'acquire',
      retry: AFTER_RESTART,
      who: 'C',
      resource: ON,
      ttlMs: TTL,
      chain: true,
      title: 'C asks again',
      say: `C asks again, now that A's lease is over and node ${c} no longer sits out.`,
    },
    {
      id: 'on-fences',
      do: 'compare-fences',
      resource: ON,
      earlier: 'A',
      later: 'C',
      fact: 'fences-on',
      factLabel: "Phase 2: C's fence against A's",
      chain: true,
      title: 'Compare the fences',
      say: `C's fence is above A's: the check that found the restart also raised node ${c}'s register above any fence handed out before it, and ${nodeList(holders.filter((n) => n !== c))} still remember A's.`,
    },
    {
      id: 'on-c-releases',
      do: 'release',
      who: 'C',
      resource: ON,
      title: 'C releases',
      say: 'C releases. Phase 2 never had two holders: its checker lane stayed green.',
    },
  ];
}
