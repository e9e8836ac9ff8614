/**
 * What an acquire attempt sends each node in its first round, encoded once (see grant.ts for the
 * commands and why their order keeps the guarantees).
 */
import { createHash } from 'node:crypto';
import { EPOCH_FIELDS } from './epoch';
import { encodeCommand, ScriptCall } from './resp';
import { ACQUIRE_SCRIPT, PROBE_SCRIPT, TIME_SCRIPT, type LuaScript } from './scripts';
import type { ReseedContext } from './reseed';
import type { FenceAhead } from './fence-ahead';

/** The sentinel's fields a probe reads, in the order of its reply (scripts/probe.lua FIELDS). */
export const PROBE_FIELDS = [
  EPOCH_FIELDS.createdAt,
  EPOCH_FIELDS.quarantineUntil,
  EPOCH_FIELDS.runId,
  EPOCH_FIELDS.maxTtlMs,
  EPOCH_FIELDS.fence,
] as const;

/**
 * What the fast transaction's read adds to PROBE_FIELDS: the evicted_keys and
 * total_commands_processed the last check recorded, compared with INFO stats read in the same
 * transaction (grant-group.ts), so that an eviction (or a RESETSTAT hiding one) since that check
 * is seen by the next grant, not the next check; and whether the node still owes a reseed of its
 * fence register (reseed.ts).
 */
export const FAST_READ_FIELDS = [...PROBE_FIELDS, EPOCH_FIELDS.evicted, EPOCH_FIELDS.processed, EPOCH_FIELDS.reseed] as const;

/** What a probe's check detects (scripts/probe.lua ARGV[3]). */
export type DetectLevel = '0' | '1' | '2';

/**
 * The cluster as one Redlock sees it, shared by its nodes: whether some node has confirmed this
 * client's lease ceiling (until then it starts no quarantine on a node without a sentinel: the
 * quarantine would be as long as a ceiling nobody confirmed), and how many nodes answered without
 * any sentinel (all of them: nothing to confirm against, its own ceiling is all there is).
 */
export interface ClusterView {
  ceilingAgreed: boolean;
  readonly withoutSentinel: Set<number>;
  readonly nodeCount: number;
  /** The redis-server process (run_id) each node's last check found: two nodes on one server are refused. */
  readonly runIds: Map<string, number>;
  /** Some node records a ceiling other than this client's: never start quarantines on "no ceiling anywhere". */
  ceilingConflict: boolean;
  /** The Redlock's nodes and round deadline, for the reseed of a node's register from the others (reseed.ts). */
  reseedFrom: ReseedContext | null;
  /** The highest fence register this client has read or fence it has proposed (fence-ahead.ts); 0: none yet. */
  fenceHigh: number;
  /** When fenceHigh was set (performance.now(), ms): a proposal moves it on by the µs since. */
  fenceHighAt: number;
}

/** The commands every attempt of one Redlock sends the same way, encoded once. */
export interface NodeProbes {
  /** `<prefix>epoch`: the sentinel, with the fence register in it. */
  readonly epochKey: string;
  /** `<prefix>fence`: the register's old key, kept in step while old clients use it. */
  readonly legacyFenceKey: string;
  readonly time: Buffer;
  /** `EVAL <time.lua> 1 <prefix>epoch`: TIME for a proxy-safe node (node.ts timeRead says why EVAL). */
  readonly timeInLua: Buffer;
  /**
   * The fast probe (grant-group.ts), one transaction: `MULTI`, `SCRIPT EXISTS` of this client's
   * check script (the proof that a check of ours ran in the process), the sentinel's `HMGET` (the
   * register in it), `EXEC`.
   */
  readonly multi: Buffer;
  readonly proof: Buffer;
  readonly read: Buffer;
  /** `EXISTS <prefix>anchor`, `INFO stats`, `TIME`: the rest of the fast transaction (grant-group.ts). */
  readonly anchorExists: Buffer;
  readonly stats: Buffer;
  readonly exec: Buffer;
  /** `WATCH <prefix>anchor`, sent after every probe on the core's own connections (grant-group.ts). */
  readonly watch: Buffer;
  /** `UNWATCH`: before a check's WATCH when the connection's watch was not armed on an existing anchor. */
  readonly unwatch: Buffer;
  /** `<prefix>anchor` */
  readonly anchorKey: string;
  /** The drift allowance (settings.driftFactor) the clock check holds each node's TIME to (clock-check.ts). */
  readonly driftFactor: number;
  /** probe.lua in fast mode, EVALSHA only (it must never be EVALed, see probe.lua): for a node that refuses SCRIPT EXISTS. */
  readonly fast: Buffer;
  /** probe.lua in check mode; the EVAL fall back of a check is a check too. */
  check(): ScriptCall;
  /** A check that starts a quarantine for evidence only this client has (probe.lua ARGV[5]). */
  checkForced(cause: 'rollback' | 'clock-jump'): ScriptCall;
  /** The check that may start a quarantine on a node without a sentinel (see protocol.ts startQuarantine). */
  readonly checkStarting: ScriptCall;
  readonly maxTtlMs: number;
  readonly detect: DetectLevel;
  readonly checkIntervalMs: number;
  readonly cluster: ClusterView;
}

/**
 * probe.lua for one (epoch key, detection level, ceiling): the same script with a first line that
 * names them (hashed: a prefix may hold any character), so its SHA is theirs alone. A check by a
 * client of another prefix, or an unsafe or misconfigured client of this one, loads a script of
 * its own, never this one: a fast probe of this script succeeds only where a check of exactly
 * this kind ran (see probe.lua).
 */
export function probeScript(epochKey: string, detect: DetectLevel, maxTtlMs: number): LuaScript {
  const identity = createHash('sha1').update(`${epochKey}\0${detect}\0${maxTtlMs}`).digest('hex');
  const source = `-- probe ${identity}\n${PROBE_SCRIPT.source}`;
  return Object.freeze({ name: `probe ${identity}`, source, sha: createHash('sha1').update(source).digest('hex') });
}

/**
 * May a check of this client start the quarantine of a node without a sentinel at once? Only once a
 * node confirmed its ceiling. (With no ceiling recorded anywhere it answers, protocol.ts
 * startQuarantine asks every node before it starts one with its own.)
 */
export function mayStartQuarantine(cluster: ClusterView): boolean {
  return cluster.ceilingAgreed;
}

/** The probes of one Redlock (its prefix, ceiling and detection settings). */
export function nodeProbes(
  epochKey: string,
  legacyFenceKey: string,
  maxTtlMs: number,
  detect: DetectLevel,
  checkIntervalMs: number,
  nodeCount: number,
  options: { anchorKey?: string; driftFactor?: number } = {},
): NodeProbes {
  const cluster: ClusterView = {
    ceilingAgreed: false,
    ceilingConflict: false,
    withoutSentinel: new Set(),
    nodeCount,
    runIds: new Map(),
    reseedFrom: null,
    fenceHigh: 0,
    fenceHighAt: 0,
  };
  const script = probeScript(epochKey, detect, maxTtlMs);
  const anchor = options.anchorKey ?? `${epochKey.replace(/epoch$/, '')}anchor`;
  const keys = [epochKey, legacyFenceKey, anchor];
  const checks = [
    new ScriptCall(script, 3, [...keys, '1', maxTtlMs, detect, '0', '']),
    new ScriptCall(script, 3, [...keys, '1', maxTtlMs, detect, '1', '']),
  ];
  const forced = (cause: 'rollback' | 'clock-jump') =>
    new ScriptCall(script, 3, [...keys, '1', maxTtlMs, detect, mayStartQuarantine(cluster) ? '1' : '0', cause]);
  return {
    epochKey,
    legacyFenceKey,
    anchorKey: anchor,
    driftFactor: options.driftFactor ?? 0.01,
    time: encodeCommand(['TIME']),
    timeInLua: new ScriptCall(TIME_SCRIPT, 1, [epochKey]).evalPayload(),
    multi: encodeCommand(['MULTI']),
    proof: encodeCommand(['SCRIPT', 'EXISTS', script.sha]),
    exec: encodeCommand(['EXEC']),
    read: encodeCommand(['HMGET', epochKey, ...FAST_READ_FIELDS]),
    anchorExists: encodeCommand(['EXISTS', anchor]),
    stats: encodeCommand(['INFO', 'stats']),
    watch: encodeCommand(['WATCH', anchor]),
    unwatch: encodeCommand(['UNWATCH']),
    fast: new ScriptCall(script, 3, [...keys, '0', maxTtlMs, detect, '0', '']).evalshaPayload(),
    check: () => checks[mayStartQuarantine(cluster) ? 1 : 0]!,
    checkForced: forced,
    checkStarting: checks[1]!,
    maxTtlMs,
    detect,
    checkIntervalMs,
    cluster,
  };
}

/** One attempt's first round, the same bytes for every node. */
export interface GrantPlan {
  readonly lockKeys: readonly string[];
  /** The grant: SET NX GET (one resource) or the acquire script (several). */
  readonly grant: Buffer;
  /** The acquire script's EVAL form, for a node that lost its script cache (several resources). */
  readonly scriptCall: ScriptCall | null;
  /** Judge the node's sentinel (quarantine, restarts, eviction, ceiling). */
  readonly quarantine: boolean;
  readonly fenced: boolean;
  readonly ttlMs: number;
  readonly probes: NodeProbes;
  /**
   * Nodes on which this attempt's grant was sent again as EVAL after a NOSCRIPT (several
   * resources): commands sent after the first try (a cleanup) may run before the second, so a
   * failed attempt names these nodes in cleanupPending (protocol.ts). Null until one happens.
   */
  replayedOn: boolean[] | null;
  /** The fence proposed ahead (fence-ahead.ts): each node raises its register in this batch, after the probe. */
  readonly ahead: FenceAhead | null;
}

/** `value` is what every lock key gets: `<token> <metadata>` (value.ts). */
export function grantPlan(
  lockKeys: readonly string[],
  value: string,
  ttlMs: number,
  options: { quarantine: boolean; fenced: boolean; probes: NodeProbes; ahead?: FenceAhead | null },
): GrantPlan {
  const ahead = options.ahead ?? null;
  if (lockKeys.length === 1) {
    return {
      lockKeys,
      scriptCall: null,
      ttlMs,
      ...options,
      ahead,
      grant: encodeCommand(['SET', lockKeys[0]!, value, 'NX', 'GET', 'PX', ttlMs]),
      replayedOn: null,
    };
  }
  const call = new ScriptCall(ACQUIRE_SCRIPT, lockKeys.length, [...lockKeys, value, ttlMs]);
  return { lockKeys, scriptCall: call, ttlMs, ...options, ahead, grant: call.evalshaPayload(), replayedOn: null };
}
