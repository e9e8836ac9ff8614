/**
 * The targeted trials (chaos/harness/targeted.ts runs them): the victim loses A's key
 * without a restart, so no run_id changes and the epoch sentinel stays.
 *
 * - rollback-replicaof: a backup of the victim (SAVE, dump.rdb copied aside) after A's warm-up; after
 *   A's grant, a side redis-server started from it, the victim made its replica until the sync is
 *   done (master_link_status:up), then REPLICAOF NO ONE: a restore in place. Its data, sentinel and
 *   fence register are the backup's.
 * - rollback-reload: the same backup copied over the victim's dump.rdb, then DEBUG RELOAD NOSAVE.
 * - rollback-swapdb: database 7 of the victim holds the same key prefix's older state (alternately
 *   a copy of the prefix's sentinel, register and every other key but the locks, taken before A's
 *   grant, and a second deployment marked clean there with a register an hour behind ours); after
 *   A's grant, SWAPDB 0 7.
 * - clock-jump: the victim runs with the clock shim (clock-shim.c). After A's grant its wall clock
 *   steps forward by 6 to 8 s (more than the trial's lease: A's key expires there at once), or
 *   back by as much (A's key stays; the safe core must still see the step). The clock goes back to
 *   real time at the end of the trial, a step the other way. A step back lengthens every key on
 *   the node by the step: the phase waits that long more before its leak scan (settleMs).
 *
 * The backup is taken, and A's grant follows it, at least the phase's lease after: the lock loops'
 * keys in the backup have all expired by the time it comes back (a key of theirs brought back from
 * the past would only confuse the hygiene checker). Every loss is recorded as a data loss of the
 * victim (the loops' keys go with A's), over the time it took.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { epochKey, lockKeyPrefix, markNodeClean, readEpoch } from '@redlock-console/redlock';
import { restartClean } from './node-ops';
import { backupNode, reloadBackup, restoreInPlace, SideServer, SWAP_DB } from './node-backup';
import { Rng } from './random';
import { now, type RunContext } from './run-context';
import type { TrialKind, TrialSpec } from './targeted-kinds';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The clock-jump trial's step, either way, ms: longer than the trial's lease, so A's key expires at once on a step forward. */
export const CLOCK_STEP_MS = { min: 6_000, max: 8_000 } as const;

export const LOSS_KINDS = ['rollback-replicaof', 'rollback-reload', 'rollback-swapdb', 'clock-jump'] as const;
export type LossKind = (typeof LOSS_KINDS)[number];

export function isLossKind(kind: TrialKind): kind is LossKind {
  return (LOSS_KINDS as readonly string[]).includes(kind);
}

/** The variants of the kinds that have two (the phase alternates them over its cycles). */
export const LOSS_VARIANTS: Readonly<Partial<Record<LossKind, readonly [string, string]>>> = {
  'rollback-swapdb': ['older-copy', 'other-deployment'],
  'clock-jump': ['forward', 'backward'],
};

/** How one trial's victim loses A's key; each step is called once, in this order. */
export interface TrialLoss {
  /** Short, for the trial's label. */
  readonly what: string;
  /** Before the trial's prefix is marked clean (e.g. the victim restarted with the clock shim). */
  setup(): Promise<void>;
  /** After A's warm-up, before B's: the backup, the older state (returns when A may ask). */
  prepare(): Promise<void>;
  /** After A's grant: the loss itself. `ok`: it took A's key (or, for a step back, moved the clock back). */
  inflict(aKey: string | null): Promise<{ ok: boolean; note: string }>;
  /** The end of the trial, whatever happened (clock back, side server stopped, older data dropped). */
  restore(): Promise<void>;
}

export function trialLoss(run: RunContext, spec: TrialSpec & { kind: LossKind }, victim: number, prefix: string): TrialLoss {
  const { supervisor } = run;
  const v = run.direct[victim]!;
  const node = supervisor.node(victim + 1);
  const mode = node.persistence;
  const rng = new Rng(spec.seed ^ 0x5bd1e995);
  const variants = LOSS_VARIANTS[spec.kind];
  const variant = spec.variant ?? (variants ? rng.pick(variants) : '');
  const keepDump = mode === 'rdb';
  const cleanups: Array<() => Promise<void> | void> = [];
  let backupDir: string | null = null;
  let preparedAt = 0;
  /** A's grant at least the phase's lease after the backup (see the header). */
  const settle = async () => {
    const wait = preparedAt + run.profile.ttlMs + 100 - performance.now();
    if (wait > 0) await sleep(wait);
  };
  const backup = async () => {
    backupDir = await backupNode(v, node.dataDir, keepDump, run.workDir);
    const dir = backupDir;
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    preparedAt = performance.now();
  };
  const lost = async (aKey: string | null) => aKey !== null && (await v.exists(aKey)) === 0;
  const record = (since: number) => spec.record({ kind: 'data-loss', node: victim, since });

  const base = { setup: async () => undefined, restore: async () => undefined };
  switch (spec.kind) {
    case 'rollback-replicaof': {
      let side: SideServer | null = null;
      return {
        ...base,
        what: 'restored in place from its own older backup (REPLICAOF, then NO ONE)',
        prepare: async () => {
          await backup();
          side = await SideServer.start(backupDir!);
          await settle();
        },
        inflict: async (aKey) => {
          const since = now(run);
          const t0 = performance.now();
          await restoreInPlace(v, side!);
          record(since);
          // The replica kept the sync's RDB as its dump.rdb: a node without persistence must not load it at its next start.
          if (!keepDump) rmSync(join(node.dataDir, 'dump.rdb'), { force: true });
          const took = Math.round(performance.now() - t0);
          return { ok: await lost(aKey), note: `victim restored in place from its backup (REPLICAOF, synced, NO ONE in ${took} ms)` };
        },
        restore: async () => {
          await side?.stop();
          await runAll(cleanups);
        },
      };
    }
    case 'rollback-reload':
      return {
        ...base,
        what: 'its older dump reloaded in place (DEBUG RELOAD NOSAVE)',
        prepare: async () => {
          await backup();
          await settle();
        },
        inflict: async (aKey) => {
          const since = now(run);
          await reloadBackup(v, node.dataDir, backupDir!, keepDump);
          record(since);
          return { ok: await lost(aKey), note: 'victim reloaded its older dump (DEBUG RELOAD NOSAVE)' };
        },
        restore: () => runAll(cleanups),
      };
    case 'rollback-swapdb': {
      const other = v.duplicate({ db: SWAP_DB });
      other.on('error', () => undefined);
      return {
        ...base,
        what: `SWAPDB 0 ${SWAP_DB} (${variant === 'older-copy' ? "an older copy of the prefix's state" : 'a second deployment, same prefix'})`,
        setup: async () => void (await other.flushdb()),
        prepare: async () => {
          if (variant === 'older-copy') {
            // Everything of the prefix but its locks: the sentinel, the register and whatever else the core keeps.
            const locks = lockKeyPrefix(prefix);
            for (const key of await scanKeys(v, `${prefix}*`)) if (!key.startsWith(locks)) await v.copy(key, key, 'DB', SWAP_DB, 'REPLACE');
          } else {
            await markNodeClean(other, {
              keyPrefix: prefix,
              maxTtlMs: run.profile.trialTtlMs,
              origin: 'chaos: a second deployment, same prefix',
            });
            const ours = (await readEpoch(v, prefix))?.fence ?? 0;
            await other.hset(epochKey(prefix), 'fence', String(Math.max(1, ours - 3_600_000 * 1000)));
          }
        },
        inflict: async (aKey) => {
          const since = now(run);
          await v.swapdb(0, SWAP_DB);
          record(since);
          return { ok: await lost(aKey), note: `victim's database 0 swapped with ${SWAP_DB} (${variant})` };
        },
        restore: async () => {
          // Database 7 holds what database 0 held before the swap: dropped (the swap was the loss).
          await other.flushdb().catch(() => undefined);
          other.disconnect();
        },
      };
    }
    case 'clock-jump': {
      const port = node.port;
      const stepMs = Math.round(rng.between(CLOCK_STEP_MS.min, CLOCK_STEP_MS.max)) * (variant === 'backward' ? -1 : 1);
      let restart = false;
      return {
        what: `clock stepped ${stepMs > 0 ? 'forward' : 'back'} by ${Math.abs(stepMs) / 1000} s`,
        setup: async () => {
          if (run.clocks.shimmed(port)) return;
          run.clocks.shim(port);
          restart = true;
          await restartClean(supervisor, victim, mode);
        },
        prepare: async () => undefined,
        inflict: async (aKey) => {
          const since = now(run);
          const before = await nodeOffsetMs(v);
          run.clocks.set(port, stepMs);
          // A step forward expires the keys it skips over (the loops' with A's): a data loss.
          if (stepMs > 0) record(since);
          const moved = (await nodeOffsetMs(v)) - before;
          const sawStep = Math.abs(moved - stepMs) < 500;
          const ok = stepMs > 0 ? sawStep && (await lost(aKey)) : sawStep;
          return { ok, note: `victim's clock stepped ${stepMs > 0 ? '+' : ''}${stepMs} ms (its TIME moved ${Math.round(moved)} ms)` };
        },
        restore: async () => {
          const since = now(run);
          run.clocks.set(port, 0);
          if (stepMs < 0) record(since);
          if (restart) {
            run.clocks.unshim(port);
            await restartClean(supervisor, victim, mode);
          }
        },
      };
    }
  }
}

/** The node's wall clock (TIME) minus this process's, ms (a round trip of error). */
async function nodeOffsetMs(client: RunContext['direct'][number]): Promise<number> {
  const [s, us] = await client.time();
  return Number(s) * 1000 + Number(us) / 1000 - Date.now();
}

async function scanKeys(client: RunContext['direct'][number], pattern: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== '0');
  return keys;
}

async function runAll(cleanups: Array<() => Promise<void> | void>): Promise<void> {
  for (const c of cleanups.splice(0)) await c();
}
