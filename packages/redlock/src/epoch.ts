import type { Redis } from 'ioredis';
import { anchorKey, epochKey, legacyFenceKey } from './keys';
import { ScriptCall } from './resp';
import { QUARANTINE_CAUSES, type QuarantineCause } from './vocabulary';
import { ADOPT_RESTART_SCRIPT, MARK_CLEAN_SCRIPT } from './scripts';

/**
 * The node epoch sentinel (`<prefix>epoch`, a hash without TTL) tells the lock core whether a node
 * still holds every lock it granted, and for which redis-server process that is true. It also holds
 * the node's fence register (field `fence`), so that no eviction or partial loss can take one and
 * leave the other. scripts/probe.lua reads it after every grant and, in its check mode, reconciles
 * it with the running process: no sentinel (data loss), a sentinel of another process (a restart,
 * possibly from an older snapshot) and evicted keys each start a quarantine (see grant.ts).
 *
 * Marking a node clean is the explicit statement "this node holds no lock that was lost": true for
 * a brand-new data directory, and an operator's judgement call otherwise. This module is the one
 * place that knows the sentinel's layout; lib/cluster (fresh data directories, graceful restarts),
 * the lock core's `markNodesClean()` and the console's mark-clean action all use it.
 */
export const EPOCH_FIELDS = Object.freeze({
  createdAt: 'createdAt',
  quarantineUntil: 'quarantineUntil',
  maxTtlMs: 'maxTtlMs',
  origin: 'origin',
  cause: 'cause',
  runId: 'runId',
  prevRunId: 'prevRunId',
  serverStartedAt: 'serverStartedAt',
  evicted: 'evicted',
  replid: 'replid',
  fence: 'fence',
  processed: 'processed',
  replacing: 'replacing',
  reseed: 'reseed',
});

/** Why a node was quarantined (the sentinel's `cause`). */
export { QUARANTINE_CAUSES, type QuarantineCause } from './vocabulary';

export interface EpochSentinel {
  /** Node clock (ms) when the sentinel was last (re)written. */
  createdAt: number;
  /** Node clock (ms) until which the node votes against every acquire; ≤ createdAt when clean. */
  quarantineUntil: number;
  /** The cluster's lease ceiling recorded on this node: every client must use the same maxTtlMs. */
  maxTtlMs: number;
  /** 'clean' (marked), 'quarantine' (written by a check after a loss or restart), or free text. */
  origin: string;
  /** Why the last quarantine was started, when the sentinel records one. */
  cause?: QuarantineCause;
  /** The redis-server process (INFO run_id) this sentinel speaks for; absent on sentinels of older versions. */
  runId?: string;
  /** The process before it, when a restart was found or adopted. */
  prevRunId?: string;
  /** Node clock (ms) at which that redis-server process started. */
  serverStartedAt?: number;
  /** The node's fence register (0 when none). */
  fence: number;
}

/** The node's fence register, or 0 when it has none (a register not yet folded in counts too). */
export async function readFenceRegister(client: Redis, keyPrefix: string): Promise<number> {
  const [inHash, legacy] = await Promise.all([client.hget(epochKey(keyPrefix), EPOCH_FIELDS.fence), client.get(legacyFenceKey(keyPrefix))]);
  return Math.max(Number(inHash ?? 0), Number(legacy ?? 0));
}

/** The node's own clock in ms, from TIME (the same clock the Lua scripts use). */
export async function nodeTimeMs(client: Redis): Promise<number> {
  const [seconds, micros] = await client.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

/** The sentinel a mark-clean was judged on: it applies only if the node still has exactly this one. */
export interface SeenSentinel {
  /** The runId the operator saw; null when the node had no sentinel at all. */
  runId: string | null;
  /** The createdAt the operator saw (omit to compare the runId only). */
  createdAt?: number;
}

export class SentinelChangedError extends Error {
  override readonly name = 'SentinelChangedError' as const;
}

/**
 * Write a clean sentinel for the running redis-server process: the node votes normally from now on.
 * Overwrites a running quarantine. In the same atomic step (scripts/mark-clean.lua) the fence
 * register is raised to at least now(ms) × 1000, since a node that lost its data lost its register
 * too and must not hand out a fence lower than one already issued (see protocol.ts). With `seen`,
 * a compare-and-set: SentinelChangedError when the node restarted or lost its data again since.
 */
export async function markNodeClean(
  client: Redis,
  options: { keyPrefix: string; maxTtlMs: number; origin?: string; seen?: SeenSentinel },
): Promise<EpochSentinel> {
  const call = markCleanArgs(options);
  const reply = (await client.eval(MARK_CLEAN_SCRIPT.source, 3, ...call)) as unknown[];
  checkMarkClean(reply);
  const sentinel = await readEpoch(client, options.keyPrefix);
  return (
    sentinel ?? {
      createdAt: Number(reply[1]),
      quarantineUntil: Number(reply[1]),
      maxTtlMs: options.maxTtlMs,
      origin: options.origin ?? 'clean',
      fence: Number(reply[2]),
    }
  );
}

/** markNodeClean's script call, for the lock core's own connections (LockNode.run); check the reply with checkMarkClean. */
export function markCleanCall(options: { keyPrefix: string; maxTtlMs: number; origin?: string; seen?: SeenSentinel }): ScriptCall {
  return new ScriptCall(MARK_CLEAN_SCRIPT, 3, markCleanArgs(options));
}

function markCleanArgs(options: { keyPrefix: string; maxTtlMs: number; origin?: string; seen?: SeenSentinel }): string[] {
  const seen = options.seen;
  return [
    epochKey(options.keyPrefix),
    legacyFenceKey(options.keyPrefix),
    anchorKey(options.keyPrefix),
    String(options.maxTtlMs),
    options.origin ?? 'clean',
    seen ? (seen.runId ?? '-') : '',
    seen?.createdAt !== undefined ? String(seen.createdAt) : '',
  ];
}

/** SentinelChangedError unless mark-clean.lua applied. */
export function checkMarkClean(reply: unknown): void {
  const r = reply as unknown[];
  if (Number(r[0]) !== 1) {
    throw new SentinelChangedError(
      `the node's sentinel changed since it was looked at (now: ${r[1] ? `written at ${String(r[1])}` : 'none'}` +
        `${r[2] ? `, process ${String(r[2]).slice(0, 8)}` : ''}): look again before marking it clean`,
    );
  }
}

/**
 * A supervisor stopped this node gracefully (persistence flushed, exit code 0) and started it again
 * unchanged: move the sentinel from the stopped process (`previousRunId`) to the running one, so
 * that the node does not sit out a restart quarantine (scripts/adopt-restart.lua argues when this is
 * sound). Never call it after a crash. Returns whether it applied.
 */
export async function adoptGracefulRestart(
  client: Redis,
  options: { keyPrefix: string; previousRunId: string; origin: string; previousQuarantineUntil?: number },
): Promise<{ adopted: boolean; reason: string }> {
  const reply = (await client.eval(
    ADOPT_RESTART_SCRIPT.source,
    1,
    epochKey(options.keyPrefix),
    options.previousRunId,
    options.origin,
    String(options.previousQuarantineUntil ?? 0),
  )) as unknown[];
  return Number(reply[0]) === 1 ? { adopted: true, reason: 'adopted' } : { adopted: false, reason: String(reply[1]) };
}

/** The redis-server process's run_id (INFO server). */
export async function serverRunId(client: Redis): Promise<string> {
  const info = await client.info('server');
  const match = /run_id:([0-9a-f]+)/.exec(info);
  if (!match) throw new Error('INFO server has no run_id');
  return match[1]!;
}

/** The sentinel as stored, or null when the node has none (it lost its data, or never had one). */
export async function readEpoch(client: Redis, keyPrefix: string): Promise<EpochSentinel | null> {
  const raw = await client.hgetall(epochKey(keyPrefix));
  return parseEpoch(raw);
}

export function parseEpoch(raw: Record<string, string> | null | undefined): EpochSentinel | null {
  if (!raw || raw[EPOCH_FIELDS.createdAt] === undefined) return null;
  const cause = raw[EPOCH_FIELDS.cause];
  return {
    createdAt: Number(raw[EPOCH_FIELDS.createdAt]),
    quarantineUntil: Number(raw[EPOCH_FIELDS.quarantineUntil] ?? 0),
    maxTtlMs: Number(raw[EPOCH_FIELDS.maxTtlMs] ?? 0),
    origin: raw[EPOCH_FIELDS.origin] ?? 'unknown',
    fence: Number(raw[EPOCH_FIELDS.fence] ?? 0),
    ...((QUARANTINE_CAUSES as readonly string[]).includes(cause ?? '') ? { cause: cause as QuarantineCause } : {}),
    ...(raw[EPOCH_FIELDS.runId] ? { runId: raw[EPOCH_FIELDS.runId] } : {}),
    ...(raw[EPOCH_FIELDS.prevRunId] ? { prevRunId: raw[EPOCH_FIELDS.prevRunId] } : {}),
    ...(raw[EPOCH_FIELDS.serverStartedAt] !== undefined ? { serverStartedAt: Number(raw[EPOCH_FIELDS.serverStartedAt]) } : {}),
  };
}
