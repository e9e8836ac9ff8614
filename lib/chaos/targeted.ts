/**
 * Targeted trials: scripted scenarios that create, on purpose and in every trial, the danger one of
 * the lock core's node checks exists for. Client A holds a lock whose keys are on exactly
 * a majority of the nodes (its links to the other two are blackholed while it acquires, then reset,
 * as a real partition ends); one node of that majority, the victim, then loses A's key in one of the
 * ways a real Redis does while keeping its epoch sentinel; client B asks for the lock. A core that
 * trusts the victim grants B the lock A still holds (two holders, and B's fence is computed from
 * registers that never saw A's), which the checkers find; the safe core refuses, and the trial
 * records why (the defence).
 *
 * - restart-rdb: the victim runs Redis's default persistence (RDB snapshots, no AOF). A SAVE before
 *   A's grant, a SIGKILL after it, a restart on the same data directory: the node is back with the
 *   snapshot, sentinel included, without A's key. Defence: a restart quarantine (new run_id).
 * - restart-rdb-late: the same, and B asks again once half the ceiling has passed since the restart,
 *   while A still holds: a restart quarantine shorter than the ceiling (the restart-quarantine-short
 *   mutant) lets B in then. Defence: the restart quarantine, both times.
 * - rollback-replicaof, rollback-reload, rollback-swapdb, clock-jump (targeted-loss.ts): the victim's
 *   data goes back in time, or its clock steps, without a restart. Defence: a quarantine of cause
 *   rollback (or replaced, for the sync) / clock-jump.
 * - restart-stale-aof: the victim runs aof-always; it crashes and comes back without persistence
 *   (empty), is marked clean for the trial's fresh prefix (which held nothing yet: what an operator
 *   does instead of waiting out the data-loss quarantine), A takes its lock, then the victim crashes
 *   again and restarts with aof-always: it loads the AOF written before the period without
 *   persistence, whose sentinel is clean and which knows nothing of A. Defence: a restart quarantine.
 * - evict-volatile-lru / evict-allkeys-random: the victim's maxmemory-policy evicts. A holds
 *   several locks there (10 / 100); memory pressure on the victim until one of A's keys is evicted
 *   (the sentinel has no TTL, so volatile-lru never takes it; allkeys-random takes any key, and the
 *   sentinel is one key among A's 101, so one of A's goes first in about 99 % of the trials).
 *   Defence: the victim votes unsafe-eviction from the first check on, so A is never granted there.
 * - evict-flip: the victim is noeviction when A is granted; its policy is switched to an evicting one
 *   and back around the pressure (CONFIG SET there and back), between two checks of B (B checked
 *   the node before, and asks again once its check interval has passed). Defence: the check finds
 *   evicted_keys grown and starts an eviction quarantine.
 * - lose-data: the victim crashes and restarts without persistence: empty, the sentinel gone with A's
 *   key. Defence: the data-loss quarantine (no sentinel: the check starts it), for maxTtlMs from
 *   the discovery, so B is refused there while A may still hold.
 * - lose-majority (targeted-reseed.ts): a majority of the nodes lose their data, fence registers
 *   included. Defence: the quarantines, and the register reseeded to now × 1000 with them.
 * - fence-stall (targeted-fence.ts): A's grant on exactly a majority, one voter of which stalls at
 *   the fence round. Defence: A is refused, its fence confirmed on a minority only.
 * - short-max-ttl: the cluster's ceiling is the trial's lease; the victim loses its data (crash,
 *   restart without persistence); a client S with a ceiling a tenth as long is the first to see it,
 *   and B asks once S's quarantine would be over. Defence: S gets MaxTtlMismatchError and starts no
 *   quarantine; B's check starts one as long as the cluster's ceiling.
 */
import { DEFAULT_SETTINGS, lockKey as keyOf, quorumSize, readEpoch } from '@redlock-console/redlock';
import { markNodeClean } from '@redlock-console/redlock';
import { evictedKeys, evictionPolicy, evictUntil, memoryPressure, removeFillers, restartClean, type EvictionPolicy } from './node-ops';
import { Rng } from './random';
import { clientSettings, markPrefixClean, now, type RunContext } from './run-context';
import type { ClientWorker } from './workers';
import { acquire, Sessions, type Granted } from './trial-sessions';
import { judgeDefence } from './targeted-defence';
import type { TrialResult, TrialSpec } from './targeted-kinds';
import { runMajorityLossTrial } from './targeted-reseed';
import { runFenceStallTrial } from './targeted-fence';
import { isLossKind, trialLoss, type TrialLoss } from './targeted-loss';

export { judgeDefence, type DefenceEvidence } from './targeted-defence';
export { TRIAL_DEFENCES, TRIAL_KINDS, type TrialKind, type TrialResult, type TrialSpec } from './targeted-kinds';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const ids = (nodes: readonly number[]) => nodes.map((n) => n + 1).join(',');
/** Locks A holds on the victim in the eviction trials (see the header). */
const EVICTION_LOCKS: Readonly<Record<EvictionPolicy, number>> = { 'volatile-lru': 10, 'allkeys-random': 100 };
/** restart-rdb-late: B asks again once this share of the ceiling has passed since the victim's restart. */
const LATE_ASK_SHARE = 0.5;

/** Run one trial of `spec.kind` and return what happened; the checkers judge its logs. */
export async function runTrial(run: RunContext, spec: TrialSpec): Promise<TrialResult> {
  if (spec.kind === 'lose-majority') return runMajorityLossTrial(run, spec);
  if (spec.kind === 'fence-stall') return runFenceStallTrial(run, spec);
  const { supervisor, direct } = run;
  const n = supervisor.size;
  const { victim, majority, others, policy } = placement(spec, n);
  const ttl = run.profile.trialTtlMs;
  const prefix = `chaos:${run.runId}:${spec.id}:`;
  const base = { maxTtlMs: ttl, retryDelayMs: 20, retryJitterMs: 10, ...spec.settings };
  const settings = clientSettings(run, prefix, base);
  const lockKey = (resource: string) => keyOf(prefix, resource);
  const v = direct[victim]!;
  const sessions = new Sessions(run, spec);
  const loss: TrialLoss | null = isLossKind(spec.kind) ? trialLoss(run, { ...spec, kind: spec.kind }, victim, prefix) : null;
  const restartKind = spec.kind === 'restart-rdb' || spec.kind === 'restart-rdb-late';
  const result: TrialResult = {
    kind: spec.kind,
    id: spec.id,
    prefix,
    logs: sessions.logs,
    victim,
    majority,
    armed: false,
    defence: null,
    defended: false,
    label: `${spec.kind}: victim node ${victim + 1}, A on nodes ${ids(majority)}${loss ? `, ${loss.what}` : ''}`,
    detail: '',
  };
  const notes: string[] = [`victim node ${victim + 1}, A on nodes ${ids(majority)}`];

  // The victim's persistence or policy, as the kind needs it for the whole trial.
  const restore = await prepareVictim(run, spec, victim, restartKind, policy);

  try {
    await loss?.setup();
    await markPrefixClean(run, prefix, ttl);
    const a = await sessions.start(0, run.links.urls(0), settings);
    const b = await sessions.start(1, supervisor.directUrls(), settings);
    // short-max-ttl: the short client S, with a tenth of the cluster's ceiling.
    const shortTtl = Math.round(ttl / 10);
    const s =
      spec.kind === 'short-max-ttl'
        ? await sessions.start(2, supervisor.directUrls(), clientSettings(run, prefix, { ...base, maxTtlMs: shortTtl }))
        : null;
    // Every client has talked to every node before anything happens (long-lived clients; the safe
    // core refuses S everywhere, for its ceiling).
    for (const c of s ? [a, b, s] : [a, b]) {
      const warm = await acquire(c, `f:${spec.id}.warm${c.index}`, c === s ? shortTtl : ttl, 5);
      if (warm.granted) await c.rpc({ op: 'release', resource: `f:${spec.id}.warm${c.index}` });
      // The backup or the older state after A's warm-up (the node has been in use), B's just before
      // A's grant: B's next look at the victim is a fast probe, not a check, where it can be.
      if (c === a) await loss?.prepare();
    }
    const warmedAt = performance.now();

    const evictionKind = spec.kind === 'evict-volatile-lru' || spec.kind === 'evict-allkeys-random' || spec.kind === 'evict-flip';
    const resources = Array.from({ length: evictionKind ? EVICTION_LOCKS[policy] : 1 }, (_, k) => `f:${spec.id}.${k}`);

    if (restartKind) {
      await v.save(); // the snapshot the victim will come back with: the sentinel, not A's key
    } else if (spec.kind === 'restart-stale-aof') {
      // A period without persistence: the victim comes back empty, the AOF stays behind on disk.
      await supervisor.crash(victim + 1);
      spec.record({ kind: 'data-loss', node: victim });
      await supervisor.start(victim + 1, 'none');
      await markNodeClean(v, { keyPrefix: prefix, maxTtlMs: ttl, origin: 'chaos: the fresh prefix held nothing (operator mark-clean)' });
    }

    // A holds its locks on exactly the majority.
    const { locks, heldUntil, held, onExactlyMajority, victimVotes } = await aHoldsOnMajority(run, a, {
      resources,
      ttl,
      others,
      majority,
      victim,
      lockKey,
      notes,
    });

    spec.record({ kind: 'fault', what: result.label });
    const { asked, restartedAt } = await inflict(run, spec, {
      victim,
      prefix,
      loss,
      restartKind,
      policy,
      held,
      lockKey,
      onExactlyMajority,
      warmedAt,
      notes,
      result,
    });
    // The short client: the first to see the victim after its loss.
    let short: Granted | null = null;
    if (s) {
      // S's attempt counts once its commands reached the victim (any vote but an error or a
      // timeout): its check runs there whether or not its round waited for the answer.
      short = (await answerOf(s, resources[0]!, shortTtl, victim, heldUntil, (vote) => !'etx-'.includes(vote))).answer;
      notes.push(
        `short client (maxTtlMs ${shortTtl}): ${short.granted ? 'GRANTED' : `refused, ${short.error}`} (votes ${short.votes ?? '-'})`,
      );
      // Until the quarantine a short ceiling would have started is over.
      await sleep(shortTtl + 100);
    }

    // B asks for what A lost (when A holds nothing there, for the first resource).
    const targets = asked.length ? asked : [resources[0]!];
    const { answers, bVictimVotes } = await askAsB(b, spec, { targets, ttl, victim, heldUntil, restartedAt, held, notes, result });
    const grantedB = targets.filter((_, k) => answers[k]!.granted);
    const epoch = await readEpoch(v, prefix).catch(() => null);
    notes.push(
      `B ${
        grantedB.length
          ? `GRANTED ${grantedB.length} of ${targets.length} (votes ${answers.find((x) => x.granted)!.votes}, fence ` +
            `${answers.find((x) => x.granted)!.fence} after A's ${locks[resources.indexOf(grantedB[0]!)]?.fence ?? '-'})`
          : `refused (${answers[0]!.error}, votes ${answers[0]!.votes ?? '-'})`
      }` +
        `; victim's sentinel: ${epoch ? `${epoch.origin}${epoch.cause ? `, cause ${epoch.cause}` : ''}, ceiling ${epoch.maxTtlMs}` : 'none'}`,
    );

    // The defence the safe core owes on the victim.
    const judged = judgeDefence(spec.kind, {
      aVictimVotes: victimVotes,
      bVictimVotes,
      bGranted: grantedB.length > 0,
      sentinel: epoch,
      shortError: short?.error ?? null,
      ceiling: ttl,
    });
    result.defence = judged.defence;
    result.defended = judged.defended;

    // The holders write (A after B: a client that does not know it lost its lock), then release.
    if (held.length) await a.rpc({ op: 'write', resource: targets[0]! }).catch(() => undefined);
    for (const r of grantedB) await b.rpc({ op: 'write', resource: r });
    for (const r of grantedB) await b.rpc({ op: 'release', resource: r });
    await Promise.all(held.map((r) => a.rpc({ op: 'release', resource: r })));
    spec.record({ kind: 'heal', what: result.label });
  } finally {
    for (let c = 0; c < n; c++) run.links.set(0, c, { kind: 'pass' });
    await sessions.close();
    await loss?.restore();
    if (restore) await restore();
  }
  result.detail = notes.join('; ');
  return result;
}

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
async function aHoldsOnMajority(
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
function placement(spec: TrialSpec, n: number): { victim: number; majority: number[]; others: number[]; policy: EvictionPolicy } {
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
async function prepareVictim(
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
async function inflict(run: RunContext, spec: TrialSpec, input: InflictInput): Promise<{ asked: string[]; restartedAt: number }> {
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
async function askAsB(
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
async function answerOf(
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
