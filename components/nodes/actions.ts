import { NODE_ACTION_GROUPS, type NodeActionName } from '@/lib/api/node-actions';
import type { NodeView } from '@/lib/api/nodes';

/** The actions are the API's (lib/api/node-actions.ts): a new one there fails to compile here until it has its spec. */
export type ActionKind = NodeActionName;

/**
 * What each action does to a node's vote: `removes` (it stops answering), `slows` (it answers late,
 * votes may time out), `restores` (it comes back).
 */
export interface ActionSpec {
  kind: ActionKind;
  label: string;
  group: 'process' | 'network';
  effect: 'removes' | 'slows' | 'restores';
  style: 'danger' | 'caution' | 'recover';
  describe: (node: NodeView) => string;
}

/** What a node action or a mark-clean did, in one line, as the Nodes screen says it after the dialog closes. */
export interface Outcome {
  tone: 'ok' | 'warn' | 'bad';
  text: string;
}

const persistenceNote = (node: NodeView) => {
  switch (node.persistence) {
    case 'aof-always':
      return 'With AOF always every acknowledged lock is on disk and comes back with it, but a crash is never vouched for: started again, it sits out the lease ceiling as a restart.';
    case 'aof-everysec':
      return 'With AOF everysec the last second of lock writes can be lost: started again, it sits out the lease ceiling as a restart.';
    case 'rdb':
      return 'With RDB snapshots it comes back with its last snapshot, older than what it held: started again, it sits out the lease ceiling as a restart.';
    case 'none':
      return 'Without persistence every key is gone: it comes back empty and is quarantined for the lease ceiling.';
    default:
      return '';
  }
};

export const ACTIONS: Record<ActionKind, ActionSpec> = {
  crash: {
    kind: 'crash',
    label: 'Crash',
    group: 'process',
    effect: 'removes',
    style: 'danger',
    describe: (n) => `Kill redis-server with SIGKILL, as a power cut would. It stays down until you start it. ${persistenceNote(n)}`,
  },
  stop: {
    kind: 'stop',
    label: 'Stop',
    group: 'process',
    effect: 'removes',
    style: 'danger',
    describe: (n) =>
      n.persistence === 'none'
        ? 'Shut redis-server down gracefully. Without persistence it keeps nothing. It stays down until you start it.'
        : 'Shut redis-server down gracefully (SHUTDOWN: its AOF fsynced, or a final SAVE with RDB). It stays down until you start it; started with the same persistence, it votes at once.',
  },
  start: {
    kind: 'start',
    label: 'Start',
    group: 'process',
    effect: 'restores',
    style: 'recover',
    describe: () =>
      'Start redis-server again with the persistence you choose. Unless it was stopped gracefully and starts with the same persistence, it sits out the lease ceiling as a restart.',
  },
  restart: {
    kind: 'restart',
    label: 'Restart…',
    group: 'process',
    effect: 'removes',
    style: 'caution',
    describe: () =>
      'Stop redis-server gracefully, then start it again — at once or after a delay — with the persistence you choose. It cannot vote while it is down.',
  },
  pause: {
    kind: 'pause',
    label: 'Pause',
    group: 'process',
    effect: 'removes',
    style: 'danger',
    describe: () =>
      'Freeze the process with SIGSTOP, like a long GC or VM pause: it keeps its keys and their TTLs keep running, but it answers nobody until resumed.',
  },
  resume: {
    kind: 'resume',
    label: 'Resume',
    group: 'process',
    effect: 'restores',
    style: 'recover',
    describe: () => 'Let the process run again (SIGCONT). Keys that expired while it was frozen are gone; the rest answer again.',
  },
  partition: {
    kind: 'partition',
    label: 'Partition',
    group: 'network',
    effect: 'removes',
    style: 'danger',
    describe: () =>
      'Cut its network: the fault proxy drops every packet, so the process runs but no client reaches it. Keys still expire on time.',
  },
  reset: {
    kind: 'reset',
    label: 'Reset connections',
    group: 'network',
    effect: 'removes',
    style: 'danger',
    describe: () =>
      'Reset every connection through its fault proxy (TCP RST), and every new one as soon as it opens, as a flapping link or a failing load balancer would: the process runs and keeps its keys, but no client gets an answer until you heal it.',
  },
  heal: {
    kind: 'heal',
    label: 'Heal',
    group: 'network',
    effect: 'restores',
    style: 'recover',
    describe: (n) =>
      n.fault === 'latency'
        ? 'Remove the added latency: traffic passes straight through again.'
        : 'Reconnect it: the fault proxy passes traffic again.',
  },
  latency: {
    kind: 'latency',
    label: 'Add latency…',
    group: 'network',
    effect: 'slows',
    style: 'caution',
    describe: () =>
      'Delay every packet through its fault proxy (half each way), with optional random jitter. Votes slower than the per-node timeout count against, and a slow grant eats into the validity clients get.',
  },
};

/** The order buttons appear in (the API's groups). */
export const PROCESS_ACTIONS: readonly ActionKind[] = NODE_ACTION_GROUPS.process;
export const NETWORK_ACTIONS: readonly ActionKind[] = NODE_ACTION_GROUPS.network;

/** Nodes that cannot answer now, whatever the reason: their votes are already missing. */
export function unavailableNodes(nodes: readonly NodeView[]): Set<number> {
  return new Set(
    nodes
      .filter(
        (n) =>
          !n.up ||
          n.process === 'down' ||
          n.process === 'stopping' ||
          n.process === 'paused' ||
          n.fault === 'blackhole' ||
          n.fault === 'reset',
      )
      .map((n) => n.id),
  );
}
