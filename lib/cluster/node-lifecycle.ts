import { Redis } from 'ioredis';
import { markNodeClean } from '@redlock-console/redlock';
import { adoptAfterStart, deleteMarker, keepsData, readAndShutdown, takeMarker, writeMarker, type StoppedIncarnation } from './continuity';
import { addressOf, type Member, type SupervisorContext } from './member';
import type { NodeExit } from './node-process';
import type { Persistence } from './persistence';

/**
 * Stop a node gracefully. With a persistence that keeps data, the server is asked to SHUTDOWN
 * with it flushed after its run_id and sentinel were read, and a clean exit (code 0) leaves a
 * continuity marker for its next start. Any older marker is gone first.
 */
export async function stopNode(ctx: SupervisorContext, member: Member): Promise<void> {
  const { node } = member;
  if (node.pid === null) return;
  deleteMarker(node.dataDir);
  member.resumable = null;
  const persistence = node.persistence;
  let reading = null as Promise<StoppedIncarnation> | null;
  const shutdown =
    keepsData(persistence) && node.state !== 'starting'
      ? () => (reading = readAndShutdown(addressOf(node, ctx.password), persistence, ctx.keyPrefix))
      : undefined;
  const exit = await node.stop(shutdown);
  // The exit can be seen before the SHUTDOWN's connection closes: wait for the reading itself.
  const seen = reading ? await (reading as Promise<StoppedIncarnation>).catch(() => null) : null;
  if (seen && exit && exit.code === 0 && exit.signal === null) {
    writeMarker(node.dataDir, {
      version: 1,
      runId: seen.runId,
      persistence,
      keyPrefix: ctx.keyPrefix,
      quarantineUntil: seen.quarantineUntil,
      stoppedAt: exit.at,
    });
    member.resumable = persistence;
    ctx.emit('graceful-stop', node.id, seen);
  }
}

/**
 * Start a node and settle its epoch before clients count on it: a brand-new data directory is
 * marked clean; otherwise the continuity marker (consumed here, whatever happens) decides whether
 * the restart is adopted. While that runs, the node's proxy holds new client connections back.
 */
export async function startNode(ctx: SupervisorContext, member: Member, persistence: Persistence, fresh = false): Promise<void> {
  const { node } = member;
  const marker = takeMarker(node.dataDir);
  member.resumable = null;
  const lastExit = describeExit(node.lastExit, node.persistence);
  const open = marker ? gate(member) : () => undefined;
  try {
    await node.start(persistence);
    if (fresh) {
      await markClean(ctx, member, 'fresh data directory');
      member.continuity = null;
      return;
    }
    const outcome = await adoptAfterStart(addressOf(node, ctx.password), marker, { persistence, keyPrefix: ctx.keyPrefix, lastExit });
    member.continuity = outcome;
    ctx.emit('continuity', node.id, outcome);
  } finally {
    open();
  }
}

/**
 * Hold new client connections in the node's proxy (a blackhole: bytes are kept, none dropped,
 * and the upstream is opened on release) while it starts and its restart is adopted, so that no
 * client's check quarantines it first. A partition or reset the operator set stays as it is.
 * Returns the release.
 */
function gate(member: Member): () => void {
  const proxy = member.proxy;
  const mode = proxy?.mode;
  if (!proxy || !mode || (mode.kind !== 'pass' && mode.kind !== 'latency')) return () => undefined;
  member.gatedMode = mode;
  proxy.setMode({ kind: 'blackhole' });
  return () => {
    member.gatedMode = null;
    proxy.setMode(mode);
  };
}

async function markClean(ctx: SupervisorContext, member: Member, origin: string): Promise<void> {
  const client = new Redis({
    host: member.node.host,
    port: member.node.port,
    ...(ctx.password !== null ? { password: ctx.password } : {}),
    lazyConnect: true,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await markNodeClean(client, { keyPrefix: ctx.keyPrefix, maxTtlMs: ctx.maxTtlMs, origin });
  } finally {
    client.disconnect();
  }
}

/** The last exit, as a restart's log line says it (`persistence`: the mode the process ran with). */
function describeExit(exit: NodeExit | null, persistence: Persistence): string {
  if (!exit) return 'none seen by this supervisor';
  if (exit.signal) return exit.signal;
  return exit.code === 0 && persistence === 'none' ? 'a stop without persistence' : `code ${exit.code}`;
}
