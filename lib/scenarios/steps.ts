/**
 * What each step kind does (script.ts's `Step`), looked up by `runStep`. The clients' steps are
 * here (acquire, await, release, several clients at once, a probe, a client's pause, the waits on a
 * lease); the writes to the stores are in step-writes.ts, the nodes' steps in step-nodes.ts and the
 * measurements in step-measures.ts.
 */
import { Permit, type AcquireOptions, type Lock } from '@redlock-console/redlock';
import type { Outcome } from '../api/scenarios';
import type { ScenarioClient } from './clients';
import { lockId, type StepContext } from './context';
import { outcomeOf, seconds, voteSummary, voteViews, type AttemptRecord } from './record';
import type { RetrySpec, Step, StepOf } from './script';
import { compareFences, measureFsync, measureLocks } from './step-measures';
import {
  backup,
  drift,
  ensurePersistence,
  markClean,
  nodeAction,
  restoreBackup,
  snapshot,
  waitKeysGone,
  waitNodesUp,
  waitQuarantine,
} from './step-nodes';
import { deliverWrite, sendWrite, write } from './step-writes';

const NO_RETRY: RetrySpec = { count: 0, delayMs: 0, jitterMs: 0 };

interface AcquireCall {
  id: string;
  who: string;
  resource: string;
  ttlMs: number;
  fenced?: boolean;
  retry?: RetrySpec;
}

/** The votes of one of `c`'s rounds, numbered by sandbox node (a client may lock on a subset of the nodes). */
function votesOf(c: ScenarioClient, votes: Parameters<typeof voteViews>[0]): ReturnType<typeof voteViews> {
  return voteViews(votes).map((v) => ({ ...v, node: c.nodeId(v.node) }));
}

/** Attempts the client's last acquire made (from its outcome event). */
function triesOf(c: ScenarioClient): number {
  return c.lastAcquire?.attempts ?? 1;
}

/**
 * The sentence for a grant whose fence is not above the last fence another client was granted on
 * the same resource in this run (the fence went down, or a tie), or null. Fences are named whole:
 * cut to their last digits, a lower fence can read as the higher one.
 */
export function fenceWentDown(
  ctx: Pick<StepContext, 'record'>,
  client: string,
  resource: string,
  fence: number | null,
  slot?: number,
): string | null {
  if (fence === null) return null;
  // A semaphore's fences are ordered per slot only (docs/semaphores.md): compare within the slot.
  const before = ctx.record.beliefs
    .filter((b) => b.resource === resource && b.slot === slot && b.client !== client && b.fence !== null)
    .at(-1);
  if (!before || before.fence === null || fence > before.fence) return null;
  return fence === before.fence
    ? `${client}'s fence ${fence} is the same number ${before.client} was granted: the fence did not go up, so it no longer names one holder.`
    : `${client}'s fence ${fence} is below ${before.client}'s ${before.fence}, granted earlier: the fence went down, so a store that checks fences would take ${before.client}'s writes over ${client}'s.`;
}

/** The client's lock of `resource`, or one permit of it when the run declares it a semaphore of `limit` permits. */
function acquireLockOrPermit(ctx: StepContext, c: ScenarioClient, call: AcquireCall, options: AcquireOptions): Promise<Lock> {
  const limit = ctx.limitOf(call.resource);
  if (limit === undefined) return c.redlock.acquire(call.resource, call.ttlMs, options);
  return c.redlock.acquireSemaphore(call.resource, limit, call.ttlMs, options);
}

/** One acquire by one client, recorded as an attempt; a grant starts a belief. Never throws but on abort. */
export async function acquireOnce(
  ctx: StepContext,
  call: AcquireCall,
): Promise<{ outcome: Outcome; attempt: AttemptRecord; fenceNote: string | null; slot?: number }> {
  const c = ctx.client(call.who);
  const retry = call.retry ?? NO_RETRY;
  const attempt: AttemptRecord = {
    id: call.id,
    client: c.name,
    resource: call.resource,
    from: ctx.now(),
    to: null,
    outcome: null,
    votes: [],
    validityMs: null,
    fence: null,
    tries: 0,
    message: null,
  };
  ctx.record.attempts.push(attempt);
  c.lastAcquire = null;
  try {
    const lock = await acquireLockOrPermit(ctx, c, call, {
      fenced: call.fenced ?? true,
      retryCount: retry.count,
      retryDelayMs: retry.delayMs,
      retryJitterMs: retry.jitterMs,
      signal: ctx.signal,
      metadata: { client: c.name },
    });
    const t = ctx.now();
    const validity = lock.validityMs;
    const slot = lock instanceof Permit ? lock.slot : undefined;
    const fenceNote = fenceWentDown(ctx, c.name, call.resource, lock.fence, slot);
    Object.assign(attempt, {
      to: t,
      outcome: 'granted',
      votes: votesOf(c, lock.votes),
      validityMs: validity,
      fence: lock.fence,
      tries: triesOf(c),
    });
    ctx.record.beliefs.push({
      client: c.name,
      resource: call.resource,
      from: t,
      validUntil: t + validity,
      to: null,
      fence: lock.fence,
      ...(slot === undefined ? {} : { slot }),
      stale: false,
      ended: 'open',
    });
    ctx.locks.set(lockId(c.name, call.resource), lock);
    ctx.record.say(
      t,
      `${c.name} acquired ${call.resource}${slot === undefined ? '' : ` (slot ${slot})`}: ${voteSummary(attempt.votes)}; validity ${seconds(validity)}${lock.fence !== null ? `, fence ${lock.fence}` : ''}`,
      'ok',
    );
    if (fenceNote) ctx.record.say(t, fenceNote, 'bad');
    return { outcome: 'granted', attempt, fenceNote, slot };
  } catch (err) {
    const outcome = outcomeOf(err);
    const votes = (err as { votes?: Parameters<typeof voteViews>[0] }).votes ?? [];
    Object.assign(attempt, {
      to: ctx.now(),
      outcome,
      votes: votesOf(c, votes),
      tries: triesOf(c),
      message: (err as Error).message ?? String(err),
    });
    if (outcome === 'aborted' || ctx.signal.aborted) throw err;
    ctx.record.say(
      attempt.to!,
      `${c.name} was refused ${call.resource}: ${outcome} (${voteSummary(attempt.votes)})`,
      outcome === 'error' ? 'bad' : 'warn',
    );
    return { outcome, attempt, fenceNote: null };
  }
}

async function release(ctx: StepContext, who: string, resource: string, mark?: string): Promise<string> {
  const lock = ctx.locks.get(lockId(who, resource));
  if (!lock) return `${who} holds nothing on ${resource}`;
  ctx.locks.delete(lockId(who, resource));
  // The client stops believing when it lets go, not when the deletes are answered.
  const t = ctx.now();
  if (mark) ctx.marks.set(mark, t);
  const belief = ctx.record.endBelief(who, resource, t, 'released');
  ctx.record.mark(t, 'release', `${who} releases`, { client: who });
  // The narration counts every node's delete, not only the quorum the release answered at.
  const result = await (await lock.release()).settled;
  const text =
    result.deleted > 0
      ? `${who} released ${resource}: deleted on ${result.deleted} node${result.deleted === 1 ? '' : 's'}`
      : `${who} released ${resource}: none of its keys were left (compare-and-delete touched nobody else's)`;
  ctx.record.say(t, text + (belief?.stale ? ' — it only now stops believing it holds the lock' : ''), 'info');
  return text;
}

async function together(ctx: StepContext, step: StepOf<'together'>): Promise<string> {
  await Promise.all(step.who.map((who) => ctx.client(who).ready([1, 2, 3, 4, 5], 10_000, ctx.signal)));
  const results = await Promise.all(
    step.who.map(async (who) => {
      const { outcome, attempt } = await acquireOnce(ctx, {
        id: `${step.id}-${who}`,
        who,
        resource: step.resource,
        ttlMs: step.ttlMs,
        retry: step.retry,
      });
      if (outcome === 'granted' && step.work) {
        write(ctx, {
          id: `${step.id}-${who}-write`,
          do: 'write',
          title: '',
          say: '',
          who,
          resource: step.resource,
          value: `${who}'s work`,
        });
        await ctx.sleep(step.work.holdMs);
        await release(ctx, who, step.resource);
      }
      return { who, outcome, attempt };
    }),
  );
  const winners = results.filter((r) => r.outcome === 'granted');
  if (step.reveals) {
    const actual = step.work ? (winners.length === step.who.length ? 'all' : 'some') : winners.length === 0 ? 'nobody' : winners[0]!.who;
    ctx.reveal(step.reveals, actual, step.explain?.[actual]);
  }
  if (step.work)
    for (const r of results)
      ctx.record.fact(`tries-${r.who}`, `${r.who}: attempts until granted`, r.outcome === 'granted' ? String(r.attempt.tries) : r.outcome);
  const tries = results.map(
    (r) =>
      `${r.who}: ${r.outcome === 'granted' ? `granted after ${r.attempt.tries} attempt${r.attempt.tries === 1 ? '' : 's'}` : r.outcome}`,
  );
  return tries.join(' · ');
}

async function probe(ctx: StepContext, step: StepOf<'probe'>): Promise<string> {
  const since = ctx.marks.get(step.since) ?? ctx.now();
  const deadline = ctx.now() + (step.timeoutMs ?? 20_000);
  for (let n = 1; ; n++) {
    const { outcome } = await acquireOnce(ctx, {
      id: `${step.id}-${n}`,
      who: step.who,
      resource: step.resource,
      ttlMs: 1_000,
      fenced: false,
    });
    if (outcome === 'granted') {
      const outage = ctx.now() - since;
      await release(ctx, step.who, step.resource);
      ctx.record.fact(step.fact, step.factLabel, seconds(outage));
      return `first grant ${seconds(outage)} after the crash (${n} tries)`;
    }
    if (ctx.now() > deadline) throw new Error(`probe: no grant within ${step.timeoutMs ?? 20_000} ms`);
    await ctx.sleep(100);
  }
}

async function acquire(ctx: StepContext, step: StepOf<'acquire'>): Promise<string> {
  if (step.waitForNodes) await ctx.client(step.who).ready(step.waitForNodes, 15_000, ctx.signal);
  const run = acquireOnce(ctx, step).then(({ outcome, attempt, fenceNote, slot }) => {
    if (step.reveals) {
      const checked =
        step.revealBy === 'overlap' ? ctx.record.checker(ctx.now() + 1).resources.find((r) => r.resource === step.resource) : null;
      const actual = checked
        ? checked.ok
          ? 'no-overlap'
          : 'overlap'
        : step.revealBy === 'granted'
          ? outcome === 'granted'
            ? 'granted'
            : 'refused'
          : outcome;
      ctx.reveal(step.reveals, actual, step.explain?.[actual]);
    }
    return `${outcome === 'granted' ? 'granted' : outcome}${slot === undefined ? '' : ` slot ${slot}`}: ${voteSummary(attempt.votes)}${attempt.validityMs !== null ? `, validity ${seconds(attempt.validityMs)}` : ''}${attempt.fence !== null ? `, fence ${attempt.fence}` : ''}${fenceNote ? `. ${fenceNote}` : ''}`;
  });
  if (step.background) {
    ctx.background.set(step.who, run);
    run.catch(() => undefined);
    return `${step.who} asks and waits…`;
  }
  return run;
}

/** The acquire `step.who` started in the background, once it is answered. */
async function awaitAcquire(ctx: StepContext, step: StepOf<'await'>): Promise<string> {
  const pending = ctx.background.get(step.who);
  ctx.background.delete(step.who);
  if (!pending) return 'nothing was pending';
  const result = String(await pending);
  const since = step.measureFrom ? ctx.marks.get(step.measureFrom.mark) : undefined;
  const granted = [...ctx.record.attempts].reverse().find((a) => a.client === step.who && a.outcome === 'granted');
  if (step.measureFrom && since !== undefined && granted?.to != null) {
    ctx.record.fact(step.measureFrom.fact, step.measureFrom.label, `${Math.max(0, granted.to - since)} ms`);
  }
  return result;
}

async function waitValidity(ctx: StepContext, step: StepOf<'wait-validity'>): Promise<string> {
  const belief = [...ctx.record.beliefs].reverse().find((b) => b.client === step.who && b.resource === step.resource);
  if (!belief) return `${step.who} never held ${step.resource}`;
  const left = belief.validUntil + (step.plusMs ?? 0) - ctx.now();
  if (left > 0) await ctx.sleep(left);
  return `${step.who}'s validity ended at ${seconds(belief.validUntil)}`;
}

/** A client stops running its steps (a GC pause, simulated), or resumes. */
function pauseOrWake(ctx: StepContext, step: StepOf<'pause-client' | 'wake-client'>): string {
  const c = ctx.client(step.who);
  const pause = step.do === 'pause-client';
  if (pause) c.pause(ctx.now());
  else c.wake(ctx.now());
  ctx.record.mark(ctx.now(), pause ? 'pause' : 'wake', `${step.who} ${pause ? 'pauses' : 'wakes'}`, { client: step.who });
  return pause ? `${step.who} stops: no renewals, no clock checks` : `${step.who} resumes where it stopped`;
}

type StepRunner<K extends Step['do']> = (ctx: StepContext, step: StepOf<K>) => Promise<string> | string;

/** What each step kind does (predictions are the engine's: a `predict` step does nothing here). */
const RUNNERS: { [K in Step['do']]: StepRunner<K> } = {
  'mark-clean': markClean,
  'ensure-persistence': ensurePersistence,
  acquire,
  await: awaitAcquire,
  release: (ctx, step) => release(ctx, step.who, step.resource, step.mark),
  write,
  'send-write': sendWrite,
  'deliver-write': deliverWrite,
  'measure-locks': measureLocks,
  node: nodeAction,
  wait: async (ctx, step) => {
    await ctx.sleepScaled(step.ms);
    return `waited ${seconds(step.ms)}`;
  },
  'wait-validity': waitValidity,
  'wait-keys-gone': waitKeysGone,
  'wait-nodes-up': waitNodesUp,
  'pause-client': pauseOrWake,
  'wake-client': pauseOrWake,
  drift,
  together,
  probe,
  snapshot,
  backup,
  'restore-backup': restoreBackup,
  'measure-fsync': measureFsync,
  'wait-quarantine': waitQuarantine,
  'compare-fences': compareFences,
  predict: () => '',
};

/** Run one step; the one-line result for the step list. */
export async function runStep(ctx: StepContext, step: Step): Promise<string> {
  // One runner per kind, typed by it (RUNNERS); TypeScript cannot pair the two through an index.
  const run = RUNNERS[step.do] as StepRunner<Step['do']>;
  return run(ctx, step);
}
