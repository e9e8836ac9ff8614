import type { FaultMode } from '../faults';
import type { NodeAction } from '../api/node-actions';
import { exhaustive } from '../exhaustive';
import { deleteMarker } from './continuity';
import { NodeActionError } from './errors';
import type { Member, SupervisorContext } from './member';
import { startNode, stopNode } from './node-lifecycle';

/** Carry out one action on a node (the caller serializes actions per node, see ClusterSupervisor.act). */
export async function performAction(ctx: SupervisorContext, member: Member, action: NodeAction): Promise<void> {
  const { node } = member;
  switch (action.action) {
    case 'crash':
      cancelRestart(member);
      deleteMarker(node.dataDir); // a crash is never graceful, whatever a stale marker says
      member.resumable = null;
      return node.crash();
    case 'stop':
      cancelRestart(member);
      return stopNode(ctx, member);
    case 'start':
      cancelRestart(member);
      if (node.state !== 'down') throw new NodeActionError(`node ${node.id} is ${node.state}; stop or crash it first`, 'BAD_STATE');
      return startNode(ctx, member, action.persistence ?? member.nextPersistence);
    case 'restart': {
      cancelRestart(member);
      const persistence = action.persistence ?? node.persistence;
      member.nextPersistence = persistence;
      await stopNode(ctx, member);
      if (!action.delayMs) return startNode(ctx, member, persistence);
      member.restartAt = Date.now() + action.delayMs;
      member.restartTimer = setTimeout(() => {
        member.restartTimer = null;
        member.restartAt = null;
        const run = member.queue.then(() => (node.state === 'down' && !ctx.isClosed() ? startNode(ctx, member, persistence) : undefined));
        member.queue = run.catch((err) => ctx.emit('node-error', node.id, err));
      }, action.delayMs);
      member.restartTimer.unref();
      return;
    }
    case 'pause':
      return node.pause();
    case 'resume':
      return node.resume();
    case 'partition':
      return setFault(ctx, member, { kind: 'blackhole' });
    case 'heal':
      return setFault(ctx, member, { kind: 'pass' });
    case 'reset':
      return setFault(ctx, member, { kind: 'reset' });
    case 'latency': {
      const jitter = action.jitterMs ?? 0;
      return setFault(ctx, member, {
        kind: 'latency',
        upMs: Math.floor(action.latencyMs / 2),
        upJitterMs: Math.floor(jitter / 2),
        downMs: Math.ceil(action.latencyMs / 2),
        downJitterMs: Math.ceil(jitter / 2),
      });
    }
    default:
      return exhaustive(action, 'node action');
  }
}

function setFault(ctx: SupervisorContext, member: Member, mode: FaultMode): void {
  if (!member.proxy) throw new NodeActionError(`node ${member.node.id} has no fault proxy`, 'NO_PROXY');
  member.proxy.setMode(mode);
  ctx.emit('fault', member.node.id, mode);
}

function cancelRestart(member: Member): void {
  if (member.restartTimer) clearTimeout(member.restartTimer);
  member.restartTimer = null;
  member.restartAt = null;
}
