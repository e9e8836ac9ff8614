/**
 * The steps that act on the nodes or wait for them: mark clean, supervisor actions, persistence
 * modes, RDB snapshots, a backup and its restore in place, clock drift, and the waits for keys to
 * go, nodes to come up and quarantines to end.
 */
import { markNodeClean, nodeTimeMs, readEpoch } from '@redlock-console/redlock';
import { lockId, type StepContext } from './context';
import { seconds } from './record';
import { Nodes, type NodeId, type StepOf } from './script';

export async function markClean(ctx: StepContext, step: StepOf<'mark-clean'>): Promise<string> {
  const statuses = await ctx.cluster.statuses();
  const up = statuses.filter((s) => s.state === 'up').map((s) => s.id);
  await ctx.cluster.whenReadable(5_000).catch(() => undefined);
  const marked: number[] = [];
  const mark = async (id: number) => {
    const client = ctx.cluster.directClient(id);
    try {
      await markNodeClean(client, { keyPrefix: ctx.prefix, maxTtlMs: ctx.maxTtlMs, origin: 'scenario run' });
      marked.push(id);
    } catch {
      // reported below by omission
    }
  };
  const order = (step.order ?? []).filter((id) => up.includes(id));
  for (const id of order) await mark(id);
  await Promise.all(up.filter((id) => !order.includes(id as NodeId)).map(mark));
  const inOrder = order.length > 0 ? ` (one at a time: ${order.join(', ')})` : '';
  marked.sort((a, b) => a - b);
  for (const id of marked) ctx.record.mark(ctx.now(), 'clean', 'marked clean', { node: id });
  return `marked node${marked.length === 1 ? '' : 's'} ${marked.join(', ')} clean for ${ctx.prefix}${inOrder}`;
}

export async function nodeAction(ctx: StepContext, step: StepOf<'node'>): Promise<string> {
  const a = step.action;
  if (a.action === 'latency') ctx.noteLatency(a.latencyMs + (a.jitterMs ?? 0));
  // What the nodes hold as a process goes down or stops answering: a key granted less than one
  // sampling period ago would otherwise never reach the timeline.
  if (a.action === 'crash' || a.action === 'stop' || a.action === 'restart' || a.action === 'pause') await ctx.sampleNow();
  const t = ctx.now();
  if (step.mark) ctx.marks.set(step.mark, t);
  const label =
    a.action === 'latency'
      ? `latency ${a.latencyMs} ms`
      : a.action === 'restart'
        ? `restart${a.persistence ? ` (${a.persistence}${a.delayMs ? `, in ${seconds(a.delayMs)}` : ''})` : ''}`
        : a.action === 'start' && a.persistence
          ? `start (${a.persistence})`
          : a.action;
  for (const id of step.nodes) ctx.record.mark(t, a.action, label, { node: id });
  await ctx.cluster.act(step.nodes, a);
  for (const id of step.nodes) ctx.nodeAction(id, label);
  if (a.action === 'start' || (a.action === 'restart' && !a.delayMs)) await ctx.cluster.warmUp(step.nodes);
  await ctx.refreshStates();
  return `${label}: node${step.nodes.length === 1 ? '' : 's'} ${step.nodes.join(', ')} (${ctx.now() - t} ms)`;
}

export async function ensurePersistence(ctx: StepContext, step: StepOf<'ensure-persistence'>): Promise<string> {
  const wrong = (await ctx.cluster.statuses())
    .filter((s) => s.persistence !== step.mode && (!step.nodes || step.nodes.includes(s.id as NodeId)))
    .map((s) => s.id);
  if (wrong.length === 0)
    return `${step.nodes ? Nodes(step.nodes) : 'every node'} already run${step.nodes?.length === 1 ? 's' : ''} ${step.mode}`;
  await ctx.cluster.act(wrong, { action: 'restart', persistence: step.mode });
  await ctx.refreshStates();
  return `restarted node${wrong.length === 1 ? '' : 's'} ${wrong.join(', ')} with ${step.mode}`;
}

/** SAVE on each node, directly: the RDB file a restart in `rdb` mode will load, as of now. */
export async function snapshot(ctx: StepContext, step: StepOf<'snapshot'>): Promise<string> {
  const t = ctx.now();
  await Promise.all(
    step.nodes.map(async (id) => {
      await ctx.cluster.directClient(id).save();
      ctx.record.mark(ctx.now(), 'snapshot', 'snapshot written (SAVE)', { node: id });
    }),
  );
  return `${Nodes(step.nodes)} wrote ${step.nodes.length === 1 ? 'its' : 'their'} RDB snapshot (SAVE, ${ctx.now() - t} ms)`;
}

/** A backup of the node now: the run's keys copied into its spare database (backup.ts). */
export async function backup(ctx: StepContext, step: StepOf<'backup'>): Promise<string> {
  const [id] = step.nodes;
  const count = await ctx.cluster.backUp(id, ctx.prefix);
  ctx.record.mark(ctx.now(), 'backup', `backup taken (${count} key${count === 1 ? '' : 's'} of this run)`, { node: id });
  return `node ${id} backed up: ${count} key${count === 1 ? '' : 's'} of this run copied aside (its spare database)`;
}

/** The node restored in place from its backup, while it runs (SWAPDB, backup.ts). */
export async function restoreBackup(ctx: StepContext, step: StepOf<'restore-backup'>): Promise<string> {
  const [id] = step.nodes;
  // What the node holds right up to the restore (a key granted since the last sample would be missed).
  await ctx.sampleNow();
  const t = ctx.now();
  const outcome = await ctx.cluster.restoreBackup(id, ctx.prefix);
  ctx.record.mark(t, 'restore', 'restored in place from the backup (SWAPDB)', { node: id });
  ctx.nodeAction(id, 'restored in place from a backup (SWAPDB)');
  const lost = outcome.lost.length > 0 ? `; gone: ${outcome.lost.join(', ')}` : '';
  return `node ${id} restored in place (SWAPDB, same process): ${outcome.restored} key${outcome.restored === 1 ? '' : 's'} of this run as the backup had them${lost}; ${outcome.kept} other key${outcome.kept === 1 ? '' : 's'} kept as they were (${ctx.now() - t} ms)`;
}

export async function drift(ctx: StepContext, step: StepOf<'drift'>): Promise<string> {
  const lock = ctx.locks.get(lockId(step.who, step.resource));
  if (!lock) throw new Error(`drift: ${step.who} holds no lock on ${step.resource}`);
  const parts: string[] = [];
  await Promise.all(
    step.nodes.map(async (id) => {
      const { before, after } = await ctx.cluster.shortenTtl(id, ctx.lockKey(step.resource), lock.token, step.fastPercent);
      const t = ctx.now();
      const text =
        before > 0 ? `clock jumps ${seconds(before - after)} ahead: key ${seconds(before)} → ${seconds(after)}` : 'key already gone';
      ctx.record.mark(t, 'drift', text, { node: id });
      parts.push(`node ${id}: ${text}`);
    }),
  );
  const belief = ctx.record.openBelief(step.who, step.resource);
  if (belief) ctx.record.say(ctx.now(), `${step.who} still counts on its validity until ${seconds(belief.validUntil)} (run time)`, 'muted');
  return parts.sort().join(' · ');
}

async function poll(ctx: StepContext, what: string, timeoutMs: number, done: () => Promise<boolean>): Promise<void> {
  const deadline = ctx.now() + timeoutMs;
  while (!(await done())) {
    if (ctx.now() > deadline) throw new Error(`gave up waiting for ${what} after ${timeoutMs} ms`);
    await ctx.sleep(40);
  }
}

export async function waitKeysGone(ctx: StepContext, step: StepOf<'wait-keys-gone'>): Promise<string> {
  await poll(ctx, `the keys of ${step.resource} to go`, step.timeoutMs ?? 10_000, async () => {
    const reads = await Promise.all(ctx.cluster.addresses.map((a) => ctx.cluster.read(a.id, ctx.now, ctx.lockKey, [step.resource])));
    return reads.every((r) => r.keys.length === 0);
  });
  return `no node holds a key of ${step.resource} any more (${seconds(ctx.now())})`;
}

export async function waitNodesUp(ctx: StepContext, step: StepOf<'wait-nodes-up'>): Promise<string> {
  await poll(ctx, `nodes ${step.nodes.join(', ')} to come up`, step.timeoutMs ?? 20_000, async () => {
    const statuses = await ctx.cluster.statuses();
    return step.nodes.every((id) => statuses.find((s) => s.id === id)?.state === 'up');
  });
  await ctx.cluster.warmUp(step.nodes);
  await ctx.refreshStates();
  return `nodes ${step.nodes.join(', ')} are up`;
}

/**
 * Wait until no node of the step sits out a quarantine of the run's prefix, read from its sentinel
 * on its own clock (a quarantine is decided on the node's clock). The fact: how long after the run
 * last started (or restored) the node the quarantine ended, on the run's clock (what the viewer saw
 * happen, not what the node says about its own start).
 */
export async function waitQuarantine(ctx: StepContext, step: StepOf<'wait-quarantine'>): Promise<string> {
  const timeoutMs = step.timeoutMs ?? ctx.maxTtlMs + 10_000;
  const deadline = ctx.now() + timeoutMs;
  const parts: string[] = [];
  for (const id of step.nodes) {
    const client = ctx.cluster.directClient(id);
    for (;;) {
      const [epoch, nodeNow] = await Promise.all([readEpoch(client, ctx.prefix), nodeTimeMs(client)]);
      const t = ctx.now();
      const left = epoch ? epoch.quarantineUntil - nodeNow : 0;
      if (!epoch || left <= 0) {
        if (epoch && epoch.quarantineUntil > epoch.createdAt) {
          const started = [...ctx.record.markers]
            .reverse()
            .find((m) => m.node === id && (m.kind === 'start' || m.kind === 'restart' || m.kind === 'restore') && m.t <= t);
          const satOut = started ? t + left - started.t : null;
          const what = started?.kind === 'restore' ? 'restored' : 'restarted';
          parts.push(
            `node ${id}: quarantine (${epoch.cause ?? 'unknown'}) over${satOut !== null ? ` ${seconds(satOut)} after the run ${what} it` : ''}`,
          );
          if (step.fact && satOut !== null) ctx.record.fact(step.fact.id, step.fact.label, seconds(satOut));
        } else {
          parts.push(`node ${id}: no quarantine`);
        }
        break;
      }
      if (t + left > deadline) throw new Error(`node ${id} stays quarantined ${seconds(left)} more, beyond this step's ${timeoutMs} ms`);
      await ctx.sleep(Math.min(left + 20, 250));
    }
  }
  await ctx.refreshStates();
  return parts.join(' · ');
}
