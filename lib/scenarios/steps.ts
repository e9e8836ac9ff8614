import type { Outcome } from '../api/scenarios';
import { markNodeClean, nodeTimeMs, readEpoch } from '@redlock-console/redlock';
import type { ScenarioClient } from './clients';
import { lockId, type StepContext } from './context';
import { outcomeOf, seconds, voteSummary, voteViews, type AttemptRecord } from './record';
import { Nodes, type NodeId, type RetrySpec, type Step } from './script';

type StepOf<K extends Step['do']> = Extract<Step, { do: K }>;

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

/** One acquire by one client, recorded as an attempt; a grant starts a belief. Never throws but on abort. */
export async function acquireOnce(ctx: StepContext, call: AcquireCall): Promise<{ outcome: Outcome; attempt: AttemptRecord }> {
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
    const lock = await c.redlock.acquire(call.resource, call.ttlMs, {
      fenced: call.fenced ?? true,
      retryCount: retry.count,
      retryDelayMs: retry.delayMs,
      retryJitterMs: retry.jitterMs,
      signal: ctx.signal,
      metadata: { client: c.name },
    });
    const t = ctx.now();
    const validity = lock.validityMs;
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
      stale: false,
      ended: 'open',
    });
    ctx.locks.set(lockId(c.name, call.resource), lock);
    ctx.record.say(
      t,
      `${c.name} acquired ${call.resource}: ${voteSummary(attempt.votes)}; validity ${seconds(validity)}${lock.fence !== null ? `, fence …${String(lock.fence).slice(-4)}` : ''}`,
      'ok',
    );
    return { outcome: 'granted', attempt };
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
    return { outcome, attempt };
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
  const result = await lock.release();
  const text =
    result.deleted > 0
      ? `${who} released ${resource}: deleted on ${result.deleted} node${result.deleted === 1 ? '' : 's'}`
      : `${who} released ${resource}: none of its keys were left (compare-and-delete touched nobody else's)`;
  ctx.record.say(t, text + (belief?.stale ? ' — it only now stops believing it holds the lock' : ''), 'info');
  return text;
}

function write(ctx: StepContext, step: StepOf<'write'>): string {
  const lock = ctx.locks.get(lockId(step.who, step.resource));
  const fence = lock?.fence ?? null;
  const w = ctx.record.write({ t: ctx.now(), client: step.who, resource: step.resource, fence, value: step.value });
  ctx.record.mark(w.t, 'write', `${step.who} writes ${step.value}`, { client: step.who });
  const text = `${step.who} writes "${step.value}" with fence ${fence === null ? 'none' : `…${String(fence).slice(-4)}`}: plain store accepted, fenced store ${w.fenced} (${w.reason})`;
  ctx.record.say(w.t, text, w.fenced === 'accepted' ? 'ok' : 'bad');
  if (step.reveals) {
    const actual = w.fenced === 'accepted' ? 'both' : 'unfenced-only';
    ctx.reveal(step.reveals, actual, step.explain?.[actual]);
  }
  return text;
}

/** The client sends a write with the fence it holds now; the network holds it (simulated) until `deliver-write`. */
function sendWrite(ctx: StepContext, step: StepOf<'send-write'>): string {
  const fence = ctx.locks.get(lockId(step.who, step.resource))?.fence ?? null;
  const t = ctx.now();
  ctx.inFlight.set(step.id, { client: step.who, resource: step.resource, fence, value: step.value, sentAt: t });
  ctx.record.mark(t, 'send', `${step.who} sends ${step.value}`, { client: step.who });
  const text = `${step.who} sends "${step.value}" with fence ${fence === null ? 'none' : `…${String(fence).slice(-4)}`}; the network holds it (simulated)`;
  ctx.record.say(t, text, 'muted');
  return text;
}

/** The held write arrives at both stores now, with the fence it was sent with. */
function deliverWrite(ctx: StepContext, step: StepOf<'deliver-write'>): string {
  const sent = ctx.inFlight.get(step.sent);
  if (!sent) throw new Error(`deliver-write: no write was sent by step ${step.sent}`);
  ctx.inFlight.delete(step.sent);
  const kept = [...ctx.record.writes].reverse().find((w) => w.client === step.keeps && w.resource === sent.resource)?.value ?? null;
  const t = ctx.now();
  const w = ctx.record.write({ t, client: sent.client, resource: sent.resource, fence: sent.fence, value: sent.value });
  ctx.record.mark(t, 'write', `${sent.client}'s write arrives`, { client: sent.client });
  ctx.record.fact('write-delay', 'Write held in the network (simulated)', seconds(t - sent.sentAt));
  const text = `${sent.client}'s write "${sent.value}" arrives ${seconds(t - sent.sentAt)} after it was sent: plain store accepted, fenced store ${w.fenced} (${w.reason})`;
  ctx.record.say(t, text, w.fenced === 'accepted' ? 'ok' : 'bad');
  const answer = (value: string | null) => (kept !== null && value === kept ? 'yes' : 'no');
  if (step.revealsPlain) {
    const actual = answer(ctx.record.plain.value);
    ctx.reveal(step.revealsPlain, actual, step.explain?.[`plain-${actual}`]);
  }
  if (step.revealsFenced) {
    const actual = answer(ctx.record.fenced.value);
    ctx.reveal(step.revealsFenced, actual, step.explain?.[`fenced-${actual}`]);
  }
  return text;
}

/**
 * `count` acquire + release pairs by each client, taking turns (so a slow moment of the machine
 * falls on both), after one pair each to warm up. Not recorded as beliefs: each pair is one
 * client's, over before the next starts. Facts: the median and the range per client.
 */
async function measureLocks(ctx: StepContext, step: StepOf<'measure-locks'>): Promise<string> {
  await Promise.all(step.who.map((who) => ctx.client(who).ready([1, 2, 3, 4, 5], 10_000, ctx.signal)));
  const times = new Map<string, number[]>(step.who.map((who) => [who, []]));
  const pair = async (who: string) => {
    const t0 = performance.now();
    const lock = await ctx.client(who).redlock.acquire(step.resource, step.ttlMs, { signal: ctx.signal, metadata: { client: who } });
    await lock.release();
    return performance.now() - t0;
  };
  for (const who of step.who) await pair(who);
  for (let i = 0; i < step.count; i++) for (const who of step.who) times.get(who)!.push(await pair(who));
  const ms = (x: number) => `${x < 10 ? x.toFixed(1) : x.toFixed(0)} ms`;
  const parts: string[] = [];
  for (const who of step.who) {
    const sorted = [...times.get(who)!].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)]!;
    const value = `${ms(median)} (${ms(sorted[0]!)}–${ms(sorted[sorted.length - 1]!)})`;
    const nodes = ctx.client(who).spec.nodes?.length ?? 5;
    ctx.record.fact(
      `${step.fact}-${who}`,
      `${who} (${nodes} node${nodes === 1 ? '' : 's'}): acquire + release, median of ${step.count}`,
      value,
    );
    parts.push(`${who}: ${value}`);
  }
  const text = `${step.count} acquire + release pairs each, median (range): ${parts.join(' · ')}`;
  ctx.record.say(ctx.now(), text, 'info');
  return text;
}

async function markClean(ctx: StepContext, step: StepOf<'mark-clean'>): Promise<string> {
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

async function nodeAction(ctx: StepContext, step: StepOf<'node'>): Promise<string> {
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

async function drift(ctx: StepContext, step: StepOf<'drift'>): Promise<string> {
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

/**
 * Time `count` SETs one after another on the node with its fsync policy as it runs, then with
 * appendfsync everysec, which is put back at once (in `finally`). One key under the run's prefix,
 * deleted at the end. Round trips are sequential, so each write's time includes its round trip:
 * the difference between the two is the fsync.
 */
async function measureFsync(ctx: StepContext, step: StepOf<'measure-fsync'>): Promise<string> {
  const id = step.nodes[0];
  const client = ctx.cluster.directClient(id);
  const key = `${ctx.prefix}fsync-probe`;
  const reply = (await client.config('GET', 'appendfsync')) as string[];
  const mode = reply[1] ?? 'always';
  const timeWrites = async () => {
    const t0 = performance.now();
    for (let i = 0; i < step.count; i++) await client.set(key, String(i), 'PX', 60_000);
    return (performance.now() - t0) / step.count;
  };
  let always: number;
  let everysec: number;
  try {
    always = await timeWrites();
    await client.config('SET', 'appendfsync', 'everysec');
    everysec = await timeWrites();
  } finally {
    await client.config('SET', 'appendfsync', mode).catch(() => undefined);
    await client.del(key).catch(() => undefined);
  }
  const ms = (x: number) => `${x < 1 ? x.toFixed(2) : x.toFixed(1)} ms`;
  const ratio = everysec > 0 ? always / everysec : 0;
  const value = `${ms(always)} vs ${ms(everysec)}${ratio >= 1.5 ? ` (×${ratio.toFixed(1)})` : ''}`;
  ctx.record.fact(step.fact, step.factLabel, value);
  const text = `node ${id}, ${step.count} writes each way: ${ms(always)} per write with appendfsync ${mode}, ${ms(everysec)} with everysec`;
  ctx.record.say(ctx.now(), text, 'info');
  return text;
}

/** SAVE on each node, directly: the RDB file a restart in `rdb` mode will load, as of now. */
async function snapshot(ctx: StepContext, step: StepOf<'snapshot'>): Promise<string> {
  const t = ctx.now();
  await Promise.all(
    step.nodes.map(async (id) => {
      await ctx.cluster.directClient(id).save();
      ctx.record.mark(ctx.now(), 'snapshot', 'snapshot written (SAVE)', { node: id });
    }),
  );
  return `${Nodes(step.nodes)} wrote ${step.nodes.length === 1 ? 'its' : 'their'} RDB snapshot (SAVE, ${ctx.now() - t} ms)`;
}

/**
 * Wait until no node of the step sits out a quarantine of the run's prefix, read from its sentinel
 * on its own clock (a quarantine is decided on the node's clock). The fact: how long after the run
 * last started the node the quarantine ended, on the run's clock (what the viewer saw happen, not
 * what the node says about its own start).
 */
async function waitQuarantine(ctx: StepContext, step: StepOf<'wait-quarantine'>): Promise<string> {
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
            .find((m) => m.node === id && (m.kind === 'start' || m.kind === 'restart') && m.t <= t);
          const satOut = started ? t + left - started.t : null;
          parts.push(
            `node ${id}: quarantine (${epoch.cause ?? 'unknown'}) over${satOut !== null ? ` ${seconds(satOut)} after the run restarted it` : ''}`,
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

/** Is `later`'s fence above `earlier`'s (their last grants on the resource)? Recorded as a fact. */
function compareFences(ctx: StepContext, step: StepOf<'compare-fences'>): string {
  const fenceOf = (who: string) =>
    [...ctx.record.attempts].reverse().find((a) => a.client === who && a.resource === step.resource && a.outcome === 'granted')?.fence ??
    null;
  const earlier = fenceOf(step.earlier);
  const later = fenceOf(step.later);
  if (earlier === null || later === null) {
    const text = `no fence to compare (${step.earlier}: ${earlier ?? 'none'}, ${step.later}: ${later ?? 'none'})`;
    ctx.record.fact(step.fact, step.factLabel, text);
    return text;
  }
  const diff = later - earlier;
  const n = (x: number) => x.toLocaleString('en-US');
  const text =
    diff > 0
      ? `${step.later}'s fence is above ${step.earlier}'s (+${n(diff)})`
      : diff === 0
        ? `${step.later}'s fence equals ${step.earlier}'s: not above`
        : `${step.later}'s fence is ${n(-diff)} below ${step.earlier}'s: not above`;
  ctx.record.fact(step.fact, step.factLabel, text);
  ctx.record.say(ctx.now(), `${text} (${step.earlier}: ${earlier}, ${step.later}: ${later})`, diff > 0 ? 'ok' : 'bad');
  return text;
}

async function poll(ctx: StepContext, what: string, timeoutMs: number, done: () => Promise<boolean>): Promise<void> {
  const deadline = ctx.now() + timeoutMs;
  while (!(await done())) {
    if (ctx.now() > deadline) throw new Error(`gave up waiting for ${what} after ${timeoutMs} ms`);
    await ctx.sleep(40);
  }
}

/** Run one step (predictions are the engine's); the one-line result for the step list. */
export async function runStep(ctx: StepContext, step: Step): Promise<string> {
  switch (step.do) {
    case 'mark-clean':
      return markClean(ctx, step);
    case 'ensure-persistence': {
      const wrong = (await ctx.cluster.statuses())
        .filter((s) => s.persistence !== step.mode && (!step.nodes || step.nodes.includes(s.id as NodeId)))
        .map((s) => s.id);
      if (wrong.length === 0)
        return `${step.nodes ? Nodes(step.nodes) : 'every node'} already run${step.nodes?.length === 1 ? 's' : ''} ${step.mode}`;
      await ctx.cluster.act(wrong, { action: 'restart', persistence: step.mode });
      await ctx.refreshStates();
      return `restarted node${wrong.length === 1 ? '' : 's'} ${wrong.join(', ')} with ${step.mode}`;
    }
    case 'acquire': {
      if (step.waitForNodes) await ctx.client(step.who).ready(step.waitForNodes, 15_000, ctx.signal);
      const run = acquireOnce(ctx, step).then(({ outcome, attempt }) => {
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
        return `${outcome === 'granted' ? 'granted' : outcome}: ${voteSummary(attempt.votes)}${attempt.validityMs !== null ? `, validity ${seconds(attempt.validityMs)}` : ''}`;
      });
      if (step.background) {
        ctx.background.set(step.who, run);
        run.catch(() => undefined);
        return `${step.who} asks and waits…`;
      }
      return run;
    }
    case 'await': {
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
    case 'release':
      return release(ctx, step.who, step.resource, step.mark);
    case 'write':
      return write(ctx, step);
    case 'send-write':
      return sendWrite(ctx, step);
    case 'deliver-write':
      return deliverWrite(ctx, step);
    case 'measure-locks':
      return measureLocks(ctx, step);
    case 'node':
      return nodeAction(ctx, step);
    case 'wait':
      await ctx.sleepScaled(step.ms);
      return `waited ${seconds(step.ms)}`;
    case 'wait-validity': {
      const belief = [...ctx.record.beliefs].reverse().find((b) => b.client === step.who && b.resource === step.resource);
      if (!belief) return `${step.who} never held ${step.resource}`;
      const left = belief.validUntil + (step.plusMs ?? 0) - ctx.now();
      if (left > 0) await ctx.sleep(left);
      return `${step.who}'s validity ended at ${seconds(belief.validUntil)}`;
    }
    case 'wait-keys-gone': {
      await poll(ctx, `the keys of ${step.resource} to go`, step.timeoutMs ?? 10_000, async () => {
        const reads = await Promise.all(ctx.cluster.addresses.map((a) => ctx.cluster.read(a.id, ctx.now, ctx.lockKey, [step.resource])));
        return reads.every((r) => r.keys.length === 0);
      });
      return `no node holds a key of ${step.resource} any more (${seconds(ctx.now())})`;
    }
    case 'wait-nodes-up': {
      await poll(ctx, `nodes ${step.nodes.join(', ')} to come up`, step.timeoutMs ?? 20_000, async () => {
        const statuses = await ctx.cluster.statuses();
        return step.nodes.every((id) => statuses.find((s) => s.id === id)?.state === 'up');
      });
      await ctx.cluster.warmUp(step.nodes);
      await ctx.refreshStates();
      return `nodes ${step.nodes.join(', ')} are up`;
    }
    case 'pause-client': {
      const c = ctx.client(step.who);
      c.pause(ctx.now());
      ctx.record.mark(ctx.now(), 'pause', `${step.who} pauses`, { client: step.who });
      return `${step.who} stops: no renewals, no clock checks`;
    }
    case 'wake-client': {
      const c = ctx.client(step.who);
      c.wake(ctx.now());
      ctx.record.mark(ctx.now(), 'wake', `${step.who} wakes`, { client: step.who });
      return `${step.who} resumes where it stopped`;
    }
    case 'drift':
      return drift(ctx, step);
    case 'together':
      return together(ctx, step);
    case 'probe':
      return probe(ctx, step);
    case 'snapshot':
      return snapshot(ctx, step);
    case 'measure-fsync':
      return measureFsync(ctx, step);
    case 'wait-quarantine':
      return waitQuarantine(ctx, step);
    case 'compare-fences':
      return compareFences(ctx, step);
    case 'predict':
      return '';
  }
}
