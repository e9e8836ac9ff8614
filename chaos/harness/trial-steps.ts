/**
 * The steps of a targeted trial (targeted.ts runTrial puts them in order): where it happens, the
 * victim's persistence or policy, A on exactly the majority, the loss inflicted by kind, and B's
 * asking with the victim's answer.
 */
import { DEFAULT_SETTINGS, quorumSize, readEpoch } from '@redlock-console/redlock';
import { evictedKeys, evictionPolicy, evictUntil, memoryPressure, removeFillers, restartClean, type EvictionPolicy } from './node-ops';
import { Rng } from './random';
import { now, type RunContext } from './run-context';
import type { ClientWorker } from './workers';
import { acquire, type Granted } from './trial-sessions';
import type { TrialResult, TrialSpec } from './targeted-kinds';
import { type TrialLoss } from './targeted-loss';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** restart-rdb-late: B asks again once this share of the ceiling has passed since the victim's restart. */
const LATE_ASK_SHARE = 0.5;

/** What a trial's loss step needs and where it reports (notes, result.armed). */
interface InflictInput {
  victim: number;
  prefix: string;
  loss: TrialLoss | null;
  restartKind: boolean;
  policy: EvictionPolicy;
  /** The resources A was granted. */
  held: string[];
  lockKey: (resource: string) => string;
  onExactlyMajority: boolean;
  warmedAt: number;
  notes: string[];
  result: TrialResult;
}

/**
 * A acquires `resources` with its links to the nodes outside the majority cut, so that each lock
 * it is granted is on exactly the majority (checked on the nodes). Until `heldUntil` A surely holds
 * them: the core's validity runs from after the request was sent.
 */
export async function aHoldsOnMajority(
  run: RunContext,
  a: ClientWorker,
  input: {
    resources: string[];
    ttl: number;
    others: number[];
    majority: number[];
    victim: number;
    lockKey: (resource: string) => string;
    notes: string[];
  },
): Promise<{ locks: Granted[]; heldUntil: number; held: string[]; onExactlyMajority: boolean; victimVotes: string[] }> {
  const { resources, ttl, others, majority, victim, lockKey, notes } = input;
  for (const o of others) run.links.set(a.index, o, { kind: 'blackhole' });
  const asked0 = performance.now();
  const locks = await Promise.all(resources.map((r) => acquire(a, r, ttl, 3)));
  // A surely holds its locks until then (the core's validity runs from after asked0).
  const validities = locks.filter((l) => l.granted).map((l) => l.validityMs ?? 0);
  const heldUntil = asked0 + (validities.length ? Math.min(...validities) : ttl);
  for (const o of others) run.links.set(a.index, o, { kind: 'reset' });
  for (const o of others) run.links.set(a.index, o, { kind: 'pass' });
  const held = resources.filter((_, k) => locks[k]!.granted);
  const onExactlyMajority = held.length > 0 && (await keysOnExactly(run, held.map(lockKey), majority));
  const victimVotes = locks.map((l) => l.votes?.[victim] ?? '-');
  notes.push(
    held.length === resources.length
      ? `A granted ${held.length} lock(s)`
      : `A granted ${held.length} of ${resources.length} lock(s)` +
          ` (victim votes ${summarize(victimVotes)}${locks.find((l) => !l.granted)?.error ? `, ${locks.find((l) => !l.granted)!.error}` : ''})`,
  );
  return { locks, heldUntil, held, onExactlyMajority, victimVotes };
}

/**
 * Where a trial happens: the victim (picked at random unless given), A's majority (the victim and
 * quorum − 1 others; A's links to the rest are cut while it acquires), the rest, and the eviction
 * policy of the eviction kinds.
 */
export function placement(spec: TrialSpec, n: number): { victim: number; majority: number[]; others: number[]; policy: EvictionPolicy } {
  const rng = new Rng(spec.seed);
  const order = rng.sample(
    Array.from({ length: n }, (_, i) => i),
    n,
  );
  const victim = spec.victim ?? rng.pick(order.slice(0, quorumSize(n)));
  // A's majority: the victim and two others; A's links to the rest are cut while it acquires.
  const majority = [victim, ...order.filter((i) => i !== victim).slice(0, quorumSize(n) - 1)].sort((a, b) => a - b);
  const others = order.filter((i) => !majority.includes(i));
  const policy: EvictionPolicy =
    spec.policy ??
    (spec.kind === 'evict-volatile-lru'
      ? 'volatile-lru'
      : spec.kind === 'evict-allkeys-random'
        ? 'allkeys-random'
        : rng.pick(['volatile-lru', 'allkeys-random'] as const));
  return { victim, majority, others, policy };
}

/** Put the victim in the persistence or eviction policy the trial's kind needs; returns how to put it back (or null). */
export async function prepareVictim(
  run: RunContext,
  spec: TrialSpec,
  victim: number,
  restartKind: boolean,
  policy: EvictionPolicy,
): Promise<(() => Promise<void>) | null> {
  const { supervisor } = run;
  const v = run.direct[victim]!;
  let restore: (() => Promise<void>) | null = null;
  const mode = supervisor.node(victim + 1).persistence;
  if (restartKind && mode !== 'rdb') {
    await restartClean(supervisor, victim, 'rdb');
    restore = () => restartClean(supervisor, victim, mode);
  } else if (spec.kind === 'restart-stale-aof' && mode !== 'aof-always') {
    await restartClean(supervisor, victim, 'aof-always');
    restore = () => restartClean(supervisor, victim, mode);
  } else if (spec.kind === 'evict-volatile-lru' || spec.kind === 'evict-allkeys-random') {
    const was = await evictionPolicy(v);
    if (was !== policy) {
      await v.config('SET', 'maxmemory-policy', policy);
      restore = async () => void (await v.config('SET', 'maxmemory-policy', was));
    }
  }
  return restore;
}

/**
 * The trial's fault on the victim, by kind: a loss in place, a crash and restart (from its
 * snapshot, or into an old AOF), a crash into an empty node, or memory pressure until A's keys are
 * evicted. Says whether the trial is armed (A's key gone from the victim, its sentinel kept, A on
 * exactly the majority). Returns the resources B is to ask for and when the victim restarted.
 */
export async function inflict(run: RunContext, spec: TrialSpec, input: InflictInput): Promise<{ asked: string[]; restartedAt: number }> {
  const { supervisor, direct } = run;
  const { victim, prefix, loss, restartKind, policy, held, lockKey, onExactlyMajority, warmedAt, notes, result } = input;
  const v = direct[victim]!;
  let asked = held;
  let sentinelKept = true;
  let restartedAt = 0;
  if (loss) {
    const inflicted = await loss.inflict(held.length ? lockKey(held[0]!) : null);
    sentinelKept = (await readEpoch(v, prefix)) !== null;
    result.armed = onExactlyMajority && inflicted.ok && sentinelKept;
    notes.push(`${inflicted.note}: ${inflicted.ok ? 'done' : 'NOT done'}, sentinel ${sentinelKept ? 'kept' : 'gone'}`);
  } else if (restartKind || spec.kind === 'restart-stale-aof') {
    await supervisor.crash(victim + 1);
    spec.record({ kind: 'data-loss', node: victim });
    await supervisor.start(victim + 1, restartKind ? 'rdb' : 'aof-always');
    restartedAt = performance.now();
    const lost = held.length > 0 && (await v.exists(lockKey(held[0]!))) === 0;
    sentinelKept = (await readEpoch(v, prefix)) !== null;
    result.armed = onExactlyMajority && lost && sentinelKept;
    notes.push(
      `victim restarted ${restartKind ? 'from its snapshot' : 'into its old AOF'}: A's key ${lost ? 'gone' : 'still there'}, ` +
        `sentinel ${sentinelKept ? 'kept' : 'gone'}`,
    );
  } else if (spec.kind === 'short-max-ttl' || spec.kind === 'lose-data') {
    await supervisor.crash(victim + 1);
    spec.record({ kind: 'data-loss', node: victim });
    await supervisor.start(victim + 1, 'none');
    result.armed = onExactlyMajority;
  } else {
    // Memory pressure until one of A's keys is gone from the victim (or, with nothing of A
    // there, until the node has evicted a good number of keys).
    const flip = spec.kind === 'evict-flip';
    if (flip) await v.config('SET', 'maxmemory-policy', policy);
    const since = now(run);
    const keys = held.map(lockKey);
    const evictedBefore = await evictedKeys(v);
    const pressure = keys.length
      ? await evictUntil(v, async () => (await v.exists(...keys)) < keys.length)
      : await memoryPressure(v, `${prefix}fill:`, async () => (await evictedKeys(v)) - evictedBefore >= 200);
    if (flip) await v.config('SET', 'maxmemory-policy', 'noeviction');
    spec.record({ kind: 'data-loss', node: victim, since });
    await removeFillers(v, `${prefix}fill:`);
    const present = keys.length ? await Promise.all(keys.map((k) => v.exists(k))) : [];
    asked = held.filter((_, k) => present[k] === 0).slice(0, 3);
    sentinelKept = (await readEpoch(v, prefix)) !== null;
    notes.push(
      `${flip ? `policy ${policy} and back; ` : ''}pressure evicted ${pressure.evicted} key(s)` +
        (keys.length ? `, ${keys.length - present.filter((p) => p === 1).length} of A's ${keys.length}` : '') +
        `, sentinel ${sentinelKept ? 'kept' : 'evicted'}`,
    );
    result.armed = keys.length ? onExactlyMajority && asked.length > 0 && sentinelKept : pressure.evicted > 0;
    if (flip) {
      // Between two checks: B asks once its check interval since its last check has passed.
      const wait = DEFAULT_SETTINGS.nodeCheckIntervalMs + 50 - (performance.now() - warmedAt);
      if (wait > 0) await sleep(wait);
    }
  }
  return { asked, restartedAt };
}

/**
 * B asks for each target once the victim answers (single attempts: answerOf); restart-rdb-late asks
 * again later in the ceiling. A trial whose B had no answer from the victim before the end of A's
 * validity is not armed (it could show nothing).
 */
export async function askAsB(
  b: ClientWorker,
  spec: TrialSpec,
  input: {
    targets: string[];
    ttl: number;
    victim: number;
    heldUntil: number;
    restartedAt: number;
    held: string[];
    notes: string[];
    result: TrialResult;
  },
): Promise<{ answers: Granted[]; bVictimVotes: string[] }> {
  const { targets, ttl, victim, heldUntil, restartedAt, held, notes, result } = input;
  const answers: Granted[] = [];
  let late = false;
  for (const r of targets) {
    const { answer, askedAt } = await answerOf(b, r, ttl, victim, heldUntil);
    answers.push(answer);
    late ||= held.length > 0 && askedAt >= heldUntil;
  }
  const bVictimVotes = answers.map((x) => x.votes?.[victim] ?? '-');
  if (spec.kind === 'restart-rdb-late' && !answers.some((x) => x.granted)) {
    // Again once a share of the ceiling has passed since the restart: A still holds.
    const wait = restartedAt + LATE_ASK_SHARE * ttl - performance.now();
    if (wait > 0) await sleep(wait);
    const { answer, askedAt } = await answerOf(b, targets[0]!, ttl, victim, heldUntil);
    answers[0] = answer;
    bVictimVotes.push(answer.votes?.[victim] ?? '-');
    late ||= held.length > 0 && askedAt >= heldUntil;
    notes.push(`B asked again ${Math.round(askedAt - restartedAt)} ms after the restart`);
  }
  if (late) {
    result.armed = false;
    notes.push("B had no answer from the victim before the end of A's validity");
  }
  return { answers, bVictimVotes };
}

/**
 * B's answer for `resource`: single attempts until B is granted or the victim's vote is an answer
 * of the node itself (not an error, a timeout or a vote left pending by an early decision), for as
 * long as A surely holds its lock (after that, nothing B gets proves anything). A quarantined vote
 * must come twice: a client that has not yet read the node's clock counts a node whose sentinel
 * records a quarantine as quarantined for one attempt, and asks for the time in the next.
 */
export async function answerOf(
  b: ClientWorker,
  resource: string,
  ttlMs: number,
  victim: number,
  heldUntil: number,
  enough: (vote: string, quarantinedBefore: boolean) => boolean = (vote, before) => !'etpx-'.includes(vote) && (vote !== 'q' || before),
): Promise<{ answer: Granted; askedAt: number }> {
  let quarantined = false;
  for (;;) {
    const askedAt = performance.now();
    const answer = await acquire(b, resource, ttlMs, 0);
    const vote = answer.votes?.[victim] ?? '-';
    if (answer.granted || enough(vote, quarantined) || performance.now() >= heldUntil) return { answer, askedAt };
    quarantined = vote === 'q';
    await sleep(20);
  }
}

/** Is every key on exactly `nodes` (and on no other node)? */
async function keysOnExactly(run: RunContext, keys: readonly string[], nodes: readonly number[]): Promise<boolean> {
  const counts = await Promise.all(run.direct.map((c) => c.exists(...keys)));
  return counts.every((count, i) => count === (nodes.includes(i) ? keys.length : 0));
}

function summarize(codes: readonly string[]): string {
  const tally = new Map<string, number>();
  for (const c of codes) tally.set(c, (tally.get(c) ?? 0) + 1);
  return [...tally].map(([c, k]) => `${c}×${k}`).join(' ');
}
