/**
 * The Redlock rounds: acquire (+ fence confirmation) and a failed attempt's cleanup, over every
 * node in parallel (a caller's release: release-round.ts; an extend: extend-round.ts). Framework-free
 * and stateless: a Redlock supplies the context.
 *
 * Safety, in one place:
 * - Mutual exclusion. A grant needs SET NX on a quorum ⌊N/2⌋+1 of the configured N, within a
 *   validity window: ttl − elapsed − drift, elapsed measured on the monotonic clock from before the
 *   first command was sent. Every key we set lives at least until t0 + ttl on its node (minus clock
 *   drift), so for the whole validity a quorum holds our key, and any other quorum shares a node
 *   with it, whose SET NX fails. Deciding early (at the quorum-th vote for, or once a quorum is out
 *   of reach) changes nothing: the votes counted are real grants, and the unanswered nodes are
 *   cleaned up like the rest. A failed attempt releases on every node, the ones that voted against
 *   or never answered included (their SET may have landed or may still land: commands on one
 *   connection run in order, so our release there runs after our SET). Release and extend are
 *   compare-and-delete/-pexpire of our token, so they can never touch a newer holder's key.
 * - Fence monotonicity: see fence-round.ts, and fence-ahead.ts for a fence proposed with the grant.
 * - Quarantine: see grant.ts and scripts/probe.lua. A node that lost its data, restarted (it may
 *   have loaded an older snapshot), had its data replaced or rolled back in place (grant-group.ts:
 *   the WATCH of the anchor, the count of data-replacing commands), evicted keys, or whose clock
 *   moved beyond the drift allowance (clock-check.ts) votes against until every lock it had
 *   granted has expired (maxTtlMs after the loss was found, or after its process started), so it
 *   cannot help a second client to a quorum while the first still holds the lock; and, when its
 *   fence register may have gone back, until the register is reseeded from the others (reseed.ts).
 */
import type { QuarantineCause } from './epoch';
import { LockContendedError, LockExpiredError, MaxTtlMismatchError, QuorumUnavailableError, type RedlockError } from './errors';
import { sendGrant } from './grant';
import { grantPlan, type NodeProbes } from './grant-plan';
import type { GrantReply } from './grant-verdict';
import { startQuarantine } from './quarantine-start';
import { startReseed } from './reseed';
import { NodeStalledError, type LockNode } from './node';
import { blockingSize, validityHorizonMs, validityMs } from './quorum';
import { confirmFence } from './fence-round';
import { aheadFence, FenceAhead, nodesClockOffset, noteRegister, proposeFence, rewriteElsewhere } from './fence-ahead';
import { FenceCall } from './fence-group';
import { Round, type ErrorSink } from './round';
import { ReleaseCall } from './release-group';
import type { RedlockSettings } from './settings';
import { lockValue, parseMetaText } from './value';
import { newToken } from './token';
import { countReason, summarizeVotes, type Vote } from './votes';

export interface ProtocolContext {
  readonly nodes: readonly LockNode[];
  readonly quorum: number;
  readonly settings: Readonly<RedlockSettings>;
  /** `<prefix>released` */
  readonly channel: string;
  readonly onNodeError: ErrorSink;
  onQuarantine(node: LockNode, until: number, discovered: boolean, cause: QuarantineCause | null): void;
}

/** One acquire() call, validated; reused by its attempts. */
export interface AcquireRequest {
  readonly resources: readonly string[];
  readonly ttlMs: number;
  readonly fenced: boolean;
  /** `<prefix>lock:<resource>`, in resource order. */
  readonly lockKeys: readonly string[];
  /** The holder metadata as JSON without its closing brace (see request.ts). */
  readonly metaHead: string;
  readonly probes: NodeProbes;
}

export type AttemptOutcome =
  | { ok: true; token: string; fence: number | null; validUntil: number; expiresAt: number; votes: readonly Vote[] }
  /**
   * `split`: the nodes that refused are held by different tokens, e.g. waiters that collided.
   * `unanswered`: per node, whether its grant or its cleanup got no answer (a key of the attempt
   * may remain there until it expires), or null when every node answered both.
   */
  | { ok: false; error: RedlockError; split: boolean; unanswered: boolean[] | null };

/** One acquire attempt: a fresh token, one grant batch per node (grant.ts), an optional fence round. */
export async function attemptAcquire(ctx: ProtocolContext, req: AcquireRequest): Promise<AttemptOutcome> {
  const { nodes, quorum, settings } = ctx;
  const t0 = performance.now();
  const wall0 = Date.now();
  const token = newToken();
  const { ttlMs } = req;
  // No success is possible once elapsed reaches ttl − drift: stop waiting there.
  const horizon = validityHorizonMs(ttlMs, settings.driftFactor);
  const timeout = Math.min(settings.nodeTimeoutMs, horizon);

  const metaHead = `${req.metaHead},"acquiredAt":"${wall0}"`;
  // A fence proposed ahead is raised with the grant (fence-ahead.ts); the value names it already.
  const proposed = req.fenced && settings.fenceAhead ? proposeFence(req.probes.cluster, nodesClockOffset(nodes, quorum)) : null;
  const ahead = proposed === null ? null : new FenceAhead(proposed, req.probes.epochKey, req.lockKeys, token);
  const value = lockValue(token, proposed === null ? `${metaHead}}` : `${metaHead},"fence":"${proposed}"}`);
  const plan = grantPlan(req.lockKeys, value, ttlMs, { quarantine: settings.quarantine, fenced: req.fenced, probes: req.probes, ahead });
  const round = new Round(
    nodes,
    quorum,
    false,
    timeout,
    (r, i, reply) => onAcquireReply(ctx, req.probes, r, i, reply as GrantReply),
    ctx.onNodeError,
    req.fenced,
  );
  for (let i = 0; i < nodes.length; i++) sendGrant(nodes[i]!, plan, round.reply(i));
  await round.done;

  let votes: readonly Vote[] = round.votes;
  let fence: number | null = null;
  let expired = round.timedOut && horizon <= settings.nodeTimeoutMs;
  if (round.forCount >= quorum) {
    if (req.fenced) fence = aheadFence(round, ahead, quorum);
    if (req.fenced && fence === null) {
      const grantMs = performance.now() - t0;
      const confirmed = await confirmFence(ctx, req, token, metaHead, round, horizon - grantMs, grantMs, proposed ?? 0);
      votes = confirmed.votes;
      fence = confirmed.ok ? confirmed.fence : null;
      if (!confirmed.ok) expired = confirmed.expired;
      if (fence !== null) noteRegister(req.probes.cluster, fence);
      if (fence !== null && ahead !== null)
        rewriteElsewhere(
          nodes,
          round.votes,
          votes,
          new FenceCall(req.probes.epochKey, req.lockKeys, token, fence, `${metaHead},"fence":"${fence}"}`),
        );
    }
    const validity = validityMs(ttlMs, performance.now() - t0, settings.driftFactor);
    if ((!req.fenced || fence !== null) && validity > 0) {
      const drift = ttlMs * settings.driftFactor + 2;
      // The grant reports the acquire round's votes (who granted, who was held or quarantined).
      return { ok: true, token, fence, validUntil: t0 + ttlMs - drift, expiresAt: wall0 + ttlMs - drift, votes: round.votes };
    }
    if (validity <= 0) expired = true;
  }

  // Failed: release everywhere (voters, refusers and the silent alike) and wait for the nodes that
  // answer (up to nodeTimeoutMs), so that when acquire() rejects nothing of the attempt is left on
  // them; a node that does not answer still gets the compare-and-delete after our grant there.
  const cleanup = await releaseEverywhere(ctx, req.lockKeys, token, req.resources);
  return {
    ok: false,
    error: acquireError(nodes.length, req.resources, votes, expired, round, settings.maxTtlMs),
    split: isSplit(round),
    unanswered: unansweredNodes(nodes, t0, round.votes, cleanup.votes, plan.replayedOn),
  };
}

/**
 * The nodes where a failed attempt's keys may remain (RedlockError.cleanupPending): the cleanup got
 * no answer; or the grant failed (an error: its bytes may have reached the node, or sit in a proxy,
 * and run after the cleanup on another connection); or the node's connection was replaced since the
 * attempt began (whatever the grant answered: see below); or the
 * grant was sent again after a NOSCRIPT (several resources: grant.ts), which may run after the
 * cleanup. A node whose cleanup answered on the connection the grant was sent on, the grant sent
 * once, holds nothing of the attempt: one connection runs its commands in the order sent, so the
 * compare-and-delete ran after the SET.
 * Only reporting: nothing sent or decided depends on it.
 */
export function unansweredNodes(
  nodes: readonly Pick<LockNode, 'readySince'>[],
  t0: number,
  grant: readonly Vote[],
  cleanup: readonly Vote[],
  replayedOn: readonly boolean[] | null,
): boolean[] | null {
  let out: boolean[] | null = null;
  for (let i = 0; i < grant.length; i++) {
    const g = grant[i]!.reason;
    const c = cleanup[i]!.reason;
    // A grant sent again after NOSCRIPT (grant.ts) may run after the cleanup. A connection replaced
    // since the attempt began names the node whatever the grant answered: a client passed in may
    // re-send unanswered commands on its new connection (ioredis's autoResendUnfulfilledCommands,
    // reconnectOnError), so an answer there does not prove that no copy of the grant is still on
    // its way over the old one.
    if (g === 'error' || g === 'not-asked' || (c !== 'ok' && c !== 'not-held') || nodes[i]!.readySince > t0 || replayedOn?.[i] === true) {
      (out ??= new Array<boolean>(grant.length).fill(false))[i] = true;
    }
  }
  return out;
}

/** The metadata of the token that refused on the most nodes (ties: the first node's), parsed. */
function holderMeta(round: Round): Record<string, string> | null {
  const { holders, holderMetas } = round;
  if (!holders || !holderMetas) return null;
  let best = -1;
  let bestCount = 0;
  for (let i = 0; i < holders.length; i++) {
    if (holders[i] === undefined) continue;
    let count = 0;
    for (const other of holders) if (other === holders[i]) count++;
    if (count > bestCount) {
      best = i;
      bestCount = count;
    }
  }
  return best < 0 ? null : parseMetaText(holderMetas[best]);
}

/** Were the contended votes of a round held by more than one token (a split vote, not one holder)? */
function isSplit(round: Round): boolean {
  const holders = round.holders;
  if (!holders) return false;
  let first: string | undefined;
  for (const holder of holders) {
    if (holder === undefined) continue;
    if (first === undefined) first = holder;
    else if (holder !== first) return true;
  }
  return false;
}

const CAUSE_DETAIL: Readonly<Record<QuarantineCause, string>> = {
  'data-loss': 'the node lost its data (no epoch sentinel)',
  restart: 'the node restarted (a new redis-server process: it may have loaded an older snapshot)',
  replaced: "the node's data was replaced by a replication sync (REPLICAOF, a promoted replica)",
  eviction: 'the node evicted keys since its last check',
  rollback: "the node's data went back in time within its process (a restore in place, DEBUG RELOAD, SWAPDB, a RESTORE of our keys)",
  'clock-jump': "the node's wall clock jumped or ran off rate beyond the drift allowance (its keys may have expired early)",
};

function quarantineDetail(cause: QuarantineCause | null): string | undefined {
  return cause === null ? undefined : CAUSE_DETAIL[cause];
}

function onAcquireReply(ctx: ProtocolContext, probes: NodeProbes, round: Round, i: number, reply: GrantReply): void {
  switch (reply[0]) {
    case 1:
      round.accept(i, reply[1]);
      return;
    case 0:
      if (!round.decided) {
        (round.holders ??= new Array<string | undefined>(round.nodes.length))[i] = reply[2];
        (round.holderMetas ??= new Array<string | null | undefined>(round.nodes.length))[i] = reply[3];
      }
      round.reject(i, 'contended');
      return;
    case 2: {
      const node = round.nodes[i]!;
      ctx.onQuarantine(node, reply[1], reply[3], reply[2]);
      // A quarantine already running answers without its cause (the fast probe does not read it):
      // the one this client saw start, when it is the same quarantine (same end).
      if (reply[2] !== null) node.quarantine.cause = { until: reply[1], cause: reply[2] };
      const cause = reply[2] ?? (node.quarantine.cause?.until === reply[1] ? node.quarantine.cause.cause : null);
      // Only while the vote counts (as holders): a late answer stays `pending` in the votes.
      if (cause === 'data-loss' && !round.decided) (round.noSentinel ??= new Array<boolean>(round.nodes.length).fill(false))[i] = true;
      round.reject(i, 'quarantined', quarantineDetail(cause), reply[1]);
      return;
    }
    case 3:
      if (!round.decided) (round.noSentinel ??= new Array<boolean>(round.nodes.length).fill(false))[i] = true;
      round.reject(
        i,
        'quarantined',
        "the node has no epoch sentinel (it lost its data); its quarantine starts once a node confirms this client's maxTtlMs",
      );
      void round.done.then(() => startQuarantine(ctx, round.nodes[i]!, probes));
      return;
    case 5:
      // The register is reseeded once this round is over (reseed.ts); until then the node votes against.
      round.reject(
        i,
        'quarantined',
        "its quarantine is over; its fence register is being raised to the other nodes' before it votes again",
      );
      void round.done.then(() => startReseed(ctx, round.nodes[i]!, probes, reply[1]));
      return;
    case 4:
      if (reply[1] === 'ceiling-mismatch' && !round.decided)
        (round.ceilings ??= new Array<number | undefined>(round.nodes.length))[i] = reply[3];
      round.reject(i, reply[1], reply[2]);
      return;
    default:
      round.reject(i, 'error', `unexpected reply ${JSON.stringify(reply)}`);
  }
}

/**
 * Classify a failed attempt (`votes`: the deciding round's, carried by the error; `round`: the
 * grant round, whose votes decide the class).
 * - Validity ran out → LockExpiredError.
 * - A node records another lease ceiling → MaxTtlMismatchError (a configuration error).
 * - The unavailable nodes (timed out, failed, quarantined, evicting, not asked) alone would have
 *   prevented a quorum → QuorumUnavailableError: the cluster is unhealthy, whoever holds the lock.
 * - Otherwise, if another holder's keys stood in the way (had those nodes been free, they and the
 *   nodes that voted for or were still answering would have made a quorum) → LockContendedError:
 *   someone holds it, wait.
 * - Otherwise (the grant had its quorum but the fence round did not) → QuorumUnavailableError.
 */
export function acquireError(
  nodeCount: number,
  resources: readonly string[],
  votes: readonly Vote[],
  expired: boolean,
  round: Round,
  clientMaxTtlMs = 0,
): RedlockError {
  const summary = summarizeVotes(votes);
  const what = resources.length === 1 ? JSON.stringify(resources[0]) : `${resources.length} resources`;
  if (expired)
    return new LockExpiredError(`acquire ${what}: validity ran out before a quorum was confirmed (${summary})`, votes, resources);
  // A node that records another ceiling is a configuration error, whatever else went wrong.
  const mismatched = round.ceilings?.find((c) => c !== undefined);
  if (mismatched !== undefined) {
    return new MaxTtlMismatchError(
      `acquire ${what}: a node records a lease ceiling (maxTtlMs) of ${mismatched} ms, this client uses ` +
        `${clientMaxTtlMs}: every client of a cluster must use the same maxTtlMs (${summary})`,
      votes,
      resources,
      mismatched,
      clientMaxTtlMs,
    );
  }
  const grantVotes = round.votes;
  const contended = countReason(grantVotes, 'contended');
  let unavailable = 0;
  for (const v of grantVotes) if (v.vote === 'against' && v.reason !== 'contended' && v.reason !== 'pending') unavailable++;
  const quorum = nodeCount - blockingSize(nodeCount) + 1;
  if (contended > 0 && round.forCount < quorum && unavailable <= nodeCount - quorum) {
    const holder = holderMeta(round);
    const owner = holder?.owner ? ` ${JSON.stringify(holder.owner)}` : '';
    return new LockContendedError(`acquire ${what}: held by another client${owner} (${summary})`, votes, resources, holder);
  }
  const missing = missingSentinel(round);
  const error = new QuorumUnavailableError(
    `acquire ${what}: too few nodes could vote (${summary})${firstRunHint(missing)}`,
    votes,
    resources,
  );
  if (missing.length > 0) (error as { missingSentinel: readonly number[] }).missingSentinel = missing;
  return error;
}

/** The nodes (numbers, from 1) of a grant round that voted quarantined for want of an epoch sentinel. */
function missingSentinel(round: Round): number[] {
  const nodes: number[] = [];
  if (round.noSentinel) for (let i = 0; i < round.noSentinel.length; i++) if (round.noSentinel[i]) nodes.push(i + 1);
  return nodes;
}

/**
 * What to do about nodes without an epoch sentinel. A brand-new master and one that lost its data
 * look the same (no sentinel, no anchor), so the message names both, and the fix for the first:
 * markNodesClean() once. Only words change here: the votes, the error class and the quarantine
 * the node serves are what they were, so mutual exclusion and the fence order are untouched.
 */
export function firstRunHint(nodes: readonly number[]): string {
  if (nodes.length === 0) return '';
  const which = nodes.length === 1 ? `node ${nodes[0]} has` : `nodes ${nodes.join(', ')} have`;
  return (
    `; ${which} no epoch sentinel: on brand-new masters (first run) initialise them once with ` +
    'redlock.markNodesClean() (the console: Nodes → Mark clean, or POST /api/nodes/{id}/mark-clean; its own ' +
    'cluster from npm start is marked at start); otherwise the node lost its data and sits out a quarantine of maxTtlMs'
  );
}

/**
 * Send the release script to every node and wait for the answers (up to nodeTimeoutMs): the
 * cleanup of a failed attempt. It publishes nothing: the keys of a failed attempt are not a release anyone waits for, and waking
 * the waiters that collided with us would only make them collide again (a split-vote livelock);
 * they retry after their jittered delay instead.
 */
export async function releaseEverywhere(
  ctx: ProtocolContext,
  lockKeys: readonly string[],
  token: string,
  resources: readonly string[],
): Promise<Round> {
  const call = new ReleaseCall(lockKeys, token, '', resources);
  // callRelease: a stalled node still gets the compare-and-delete (queued behind our grant there),
  // without holding up the others.
  // A node already known to be stalled answers at once (NodeStalledError): not worth a report,
  // the grant round already counted it out.
  const onError = (node: LockNode, err: Error) => {
    if (!(err instanceof NodeStalledError)) ctx.onNodeError(node, err);
  };
  const round = new Round(ctx.nodes, ctx.nodes.length, true, ctx.settings.nodeTimeoutMs, onReleaseReply, onError);
  for (let i = 0; i < ctx.nodes.length; i++) ctx.nodes[i]!.callRelease(call, round.reply(i));
  await round.done;
  return round;
}

function onReleaseReply(round: Round, i: number, reply: unknown): void {
  const deleted = Number(reply);
  if (deleted > 0) round.accept(i, deleted);
  else round.reject(i, 'not-held');
}
