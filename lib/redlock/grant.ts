/**
 * The first round of an acquire on one node: the grant, the quarantine check and the fence
 * register read, sent back to back as one batch on the node's connection.
 *
 * - One resource: `SET <lock> '<token> <metadata>' NX GET PX <ttl>` grants the lock exactly when
 *   no key was there (atomically, like a script's GET-then-SET) and otherwise answers the holder's
 *   value (its token and metadata, see value.ts). No Lua: a script call costs Redis ~2 µs more
 *   than this one command, and the grant is the hot path.
 * - Several resources: scripts/acquire.lua grants them all or none.
 * - Then, read after the grant: `HMGET <epoch> createdAt quarantineUntil` and, for fenced locks,
 *   `GET <fence>`. While the node may be quarantined, `TIME` goes first, before the grant, so that
 *   "the quarantine was over" is a statement about the moment our SET ran (see commandsFor).
 *
 * Why reading the epoch and the register after the grant, outside any script, keeps the
 * guarantees (see protocol.ts for the rest):
 * - Quarantine. A node votes for only if the sentinel read after our SET is there and its
 *   quarantine is over. A node that lost its data before our SET has no sentinel at that read (only
 *   scripts/quarantine.lua writes one after a loss, and it writes a quarantine), so it cannot vote
 *   for; a loss after the read is the case the quarantine exists for, found by the next acquire —
 *   exactly as with the atomic script, whose atomicity never covered a loss after it ran either.
 *   Our key may stay on a node that voted against (quarantined): that only makes others' SET NX
 *   fail there (liveness), and our release or its ttl removes it.
 * - Fences. The argument in protocol.ts (confirmFence) needs the register read on a node after our
 *   SET there: the GET runs after the SET on the same connection, and registers only grow.
 * The metadata travels inside the lock key's value, so a SET that loses writes nothing at all.
 */
import type { BatchReplies, LockNode, Reply } from './node';
import { encodeCommand, ScriptCall } from './resp';
import { ACQUIRE_SCRIPT, QUARANTINE_SCRIPT } from './scripts';
import { metaTextOf, tokenOf } from './value';

/** The commands every attempt of one prefix sends the same way, encoded once. */
export interface NodeProbes {
  readonly fenceKey: string;
  readonly epoch: Buffer;
  readonly time: Buffer;
  readonly fence: Buffer;
  readonly quarantine: ScriptCall;
}

const probeCache = new Map<string, NodeProbes>();

/** `<prefix>epoch`, `<prefix>fence` and `maxTtlMs` → the probes (cached: a Redlock reuses them). */
export function nodeProbes(epochKey: string, fenceKey: string, maxTtlMs: number): NodeProbes {
  const id = `${epochKey}\n${fenceKey}\n${maxTtlMs}`;
  let probes = probeCache.get(id);
  if (!probes) {
    probes = {
      fenceKey,
      epoch: encodeCommand(['HMGET', epochKey, 'createdAt', 'quarantineUntil']),
      time: encodeCommand(['TIME']),
      fence: encodeCommand(['GET', fenceKey]),
      quarantine: new ScriptCall(QUARANTINE_SCRIPT, 2, [epochKey, fenceKey, maxTtlMs]),
    };
    if (probeCache.size > 64) probeCache.clear();
    probeCache.set(id, probes);
  }
  return probes;
}

/** One attempt's first round, the same bytes for every node. */
export interface GrantPlan {
  readonly lockKeys: readonly string[];
  /** The grant: SET NX GET (one resource) or the acquire script (several). */
  readonly grant: Buffer;
  /** The acquire script's EVAL form, for a node that lost its script cache (several resources). */
  readonly scriptCall: ScriptCall | null;
  readonly quarantine: boolean;
  readonly fenced: boolean;
  readonly probes: NodeProbes;
}

/** `value` is what every lock key gets: `<token> <metadata>` (value.ts). */
export function grantPlan(lockKeys: readonly string[], value: string, ttlMs: number,
  options: { quarantine: boolean; fenced: boolean; probes: NodeProbes }): GrantPlan {
  if (lockKeys.length === 1) {
    return { lockKeys, scriptCall: null, ...options, grant: encodeCommand(['SET', lockKeys[0]!, value, 'NX', 'GET', 'PX', ttlMs]) };
  }
  const call = new ScriptCall(ACQUIRE_SCRIPT, lockKeys.length, [...lockKeys, value, ttlMs]);
  return { lockKeys, scriptCall: call, ...options, grant: call.evalshaPayload() };
}

/**
 * A node's answer, in one shape for every kind of grant:
 * [1, register] granted (register 0 unless fenced) | [0, i, holder, meta] held: lock key i
 * (1-based) by token `holder`, whose value carries the metadata text `meta` (null: none) | [2, quarantineUntil] quarantined | [3] no sentinel: the node lost its data
 * (it votes quarantined at once; startQuarantine() records the quarantine).
 */
export type GrantReply = [1, number] | [0, number, string, string | null] | [2, number] | [3];

/** Send the plan to one node; `reply` gets its GrantReply, or the error the node failed with. */
export function sendGrant(node: LockNode, plan: GrantPlan, reply: Reply): void {
  // Ask for the node's TIME only while it may be quarantined (decided once per send).
  const withTime = plan.quarantine && node.quarantine.wantTime;
  node.callBatch(commandsFor(plan, plan.grant, withTime), (err, value) => {
    const replies = value as BatchReplies;
    const granted = err ? null : replies[withTime ? 1 : 0];
    if (plan.scriptCall && granted instanceof Error && granted.message.startsWith('NOSCRIPT')) {
      // The node lost its script cache: the same batch with the script's source. The commands we
      // send after this batch (a cleanup release) fall back the same way, in reply order.
      node.callBatch(commandsFor(plan, plan.scriptCall.evalPayload(), withTime), (err2, again) => answer(node, plan, withTime, err2, again, reply));
      return;
    }
    answer(node, plan, withTime, err, value, reply);
  });
}

function answer(node: LockNode, plan: GrantPlan, withTime: boolean, err: Error | null, replies: unknown, reply: Reply): void {
  if (err) {
    reply(err, undefined);
    return;
  }
  let decided: GrantReply;
  try {
    decided = decide(node, plan, replies as BatchReplies, withTime);
  } catch (failed) {
    reply(failed instanceof Error ? failed : new Error(String(failed)), undefined);
    return;
  }
  reply(null, decided);
}

/**
 * [TIME], grant, [epoch], [fence], in this order on one connection. TIME comes FIRST:
 * a quarantine is judged over only when the node's clock had passed quarantineUntil before our
 * SET ran (TIME read after the SET could pass the end of the quarantine while the SET itself ran
 * inside it, if other clients' commands ran in between). The epoch and the register are read
 * AFTER the SET (see the header).
 */
function commandsFor(plan: GrantPlan, grant: Buffer, withTime: boolean): Buffer[] {
  const commands = withTime ? [plan.probes.time, grant] : [grant];
  if (plan.quarantine) commands.push(plan.probes.epoch);
  if (plan.fenced) commands.push(plan.probes.fence);
  return commands;
}

function decide(node: LockNode, plan: GrantPlan, replies: BatchReplies, withTime: boolean): GrantReply {
  for (const reply of replies) if (reply instanceof Error) throw reply;
  const time = withTime ? (replies[0] as [string, string]) : null;
  const grantAt = withTime ? 1 : 0;
  let at = grantAt + 1;
  if (plan.quarantine) {
    const epoch = replies[at++] as [string | null, string | null];
    const verdict = checkEpoch(node, epoch, time);
    if (verdict === 'lost') return [3];
    if (verdict !== null) return [2, verdict];
  }
  const grant = replies[grantAt];
  if (plan.scriptCall === null) {
    if (grant !== null) return held(1, String(grant));
  } else if (grant !== 0) {
    const [i, holder] = grant as [number, string];
    return held(Number(i), String(holder));
  }
  return [1, plan.fenced ? Number(replies[at] ?? 0) : 0];
}

function held(i: number, value: string): GrantReply {
  return [0, i, tokenOf(value), metaTextOf(value)];
}

/**
 * null when the node may vote; its quarantineUntil when it is quarantined; 'lost' when it has no
 * sentinel. A sentinel with quarantineUntil > createdAt records a quarantine, over or not: the
 * node's TIME decides, and a quarantine seen to be over is remembered per node, so TIME is only
 * sent while a node may be quarantined. Without a TIME reply such a node counts as quarantined
 * for this attempt (against: always safe) and the next attempt asks for the time.
 */
function checkEpoch(node: LockNode, epoch: [string | null, string | null], time: [string, string] | null): number | 'lost' | null {
  const [createdAt, until] = epoch;
  const q = node.quarantine;
  if (createdAt === null) {
    q.wantTime = true;
    return 'lost';
  }
  // A quarantine is told apart by its sentinel (createdAt and until), not by until alone.
  const id = `${createdAt}|${until}`;
  if (until === null || Number(until) <= Number(createdAt) || id === q.over) {
    q.wantTime = false;
    return null;
  }
  if (time !== null && Number(time[0]) * 1000 + Math.floor(Number(time[1]) / 1000) >= Number(until)) {
    q.over = id;
    q.wantTime = false;
    return null;
  }
  q.wantTime = true;
  return Number(until);
}

/**
 * The node has no sentinel: start its quarantine with scripts/quarantine.lua (or read the one
 * another client started). One call per node at a time; resolves with [quarantineUntil, discovered].
 */
export function startQuarantine(node: LockNode, probes: NodeProbes): Promise<[number, boolean]> {
  const q = node.quarantine;
  q.starting ??= node.run(probes.quarantine).then((reply) => {
    const [until, discovered] = reply as [number, number];
    return [Number(until), discovered === 1] as [number, boolean];
  }).finally(() => {
    q.starting = null;
  });
  return q.starting;
}
