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
import { lockKey as keyOf, readEpoch } from '@redlock-console/redlock';
import { markNodeClean } from '@redlock-console/redlock';
import { type EvictionPolicy } from './node-ops';
import { clientSettings, markPrefixClean, type RunContext } from './run-context';
import { acquire, Sessions, type Granted } from './trial-sessions';
import { judgeDefence } from './targeted-defence';
import type { TrialResult, TrialSpec } from './targeted-kinds';
import { runMajorityLossTrial } from './targeted-reseed';
import { runFenceStallTrial } from './targeted-fence';
import { isLossKind, trialLoss, type TrialLoss } from './targeted-loss';
import { aHoldsOnMajority, answerOf, askAsB, inflict, placement, prepareVictim } from './trial-steps';

export { judgeDefence, type DefenceEvidence } from './targeted-defence';
export { TRIAL_DEFENCES, TRIAL_KINDS, type TrialKind, type TrialResult, type TrialSpec } from './targeted-kinds';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const ids = (nodes: readonly number[]) => nodes.map((n) => n + 1).join(',');
/** Locks A holds on the victim in the eviction trials (see the header). */
const EVICTION_LOCKS: Readonly<Record<EvictionPolicy, number>> = { 'volatile-lru': 10, 'allkeys-random': 100 };

/** Run one trial of `spec.kind` and return what happened; the checkers judge its logs. */
/**
 * Seeds tried after a trial whose danger was not in place (e.g. A was not granted on exactly the
 * majority, on a loaded machine), before the trial counts as it is: it proves nothing either way.
 */
export const UNARMED_RETRIES = 2;

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
