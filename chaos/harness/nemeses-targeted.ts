/**
 * The targeted nemeses (chaos/harness/nemeses.ts): each cycle is a targeted trial
 * (chaos/harness/targeted.ts) that creates the danger on purpose.
 */
import { restartAllClean, restartClean, type EvictionPolicy } from './node-ops';
import { ttls, type Fault, type Nemesis, type NemesisContext, type NemesisName } from './nemeses-kinds';
import type { TrialKind } from './targeted-kinds';
import { CLOCK_STEP_MS, isLossKind, LOSS_VARIANTS } from './targeted-loss';

/**
 * One cycle of a targeted nemesis: the trial records its own fault and heal (from the loss to B's
 * answer). A kind with two variants (targeted-loss.ts) alternates them over the cycles.
 */
async function targetedCycle(ctx: NemesisContext, kind: TrialKind): Promise<Fault> {
  const variants = isLossKind(kind) ? LOSS_VARIANTS[kind] : undefined;
  const r = await ctx.trial(kind, {
    ...(ctx.victim === null ? {} : { victim: ctx.victim }),
    ...(variants ? { variant: variants[ctx.cycle % 2] } : {}),
  });
  return { label: r.label, durationMs: 0, heal: async () => undefined };
}

/** The phase's victim restarted (clean, without persistence) with the clock shim, or without it. */
async function shimVictim(ctx: NemesisContext, on: boolean): Promise<void> {
  if (on) ctx.victim = ctx.rng.int(0, ctx.supervisor.size - 1);
  if (ctx.victim === null) return;
  const port = ctx.supervisor.nodes()[ctx.victim]!.port;
  if (on) ctx.clocks.shim(port);
  else ctx.clocks.unshim(port);
  await restartClean(ctx.supervisor, ctx.victim, 'none');
}

/**
 * An eviction nemesis: one node (the victim, for the whole phase) runs an evicting policy, set
 * before any client of the phase connects, so that every client's first check of it sees the
 * policy (a policy set at run time is the window evict-flip covers, outside any phase: see
 * docs/chaos.md). Each cycle puts it under memory pressure while A asks for locks held there.
 */
function evictionNemesis(name: 'evict-volatile-lru' | 'evict-allkeys-random', policy: EvictionPolicy): Nemesis {
  return {
    name,
    network: 'direct',
    targeted: name,
    title: `one node with maxmemory-policy ${policy}, under memory pressure, while A holds locks there (targeted)`,
    setup: async (ctx) => {
      ctx.victim = ctx.rng.int(0, ctx.supervisor.size - 1);
      await ctx.direct[ctx.victim]!.config('SET', 'maxmemory-policy', policy);
    },
    teardown: async (ctx) => {
      if (ctx.victim === null) return;
      const node = ctx.direct[ctx.victim]!;
      await node.config('SET', 'maxmemory', '0');
      await node.config('SET', 'maxmemory-policy', 'noeviction');
    },
    fault: (ctx) => targetedCycle(ctx, name),
    healMs: (ctx) => ttls(ctx, 0.5, 1),
  };
}

type TargetedNemesisName = Extract<
  NemesisName,
  | 'restart-rdb'
  | 'restart-stale-aof'
  | 'evict-volatile-lru'
  | 'evict-allkeys-random'
  | 'lose-data'
  | 'lose-majority'
  | 'fence-stall'
  | 'short-max-ttl'
  | 'restart-rdb-late'
  | 'rollback-replicaof'
  | 'rollback-reload'
  | 'rollback-swapdb'
  | 'clock-jump'
>;

export const TARGETED_NEMESES: Readonly<Record<TargetedNemesisName, Nemesis>> = {
  'restart-rdb': {
    name: 'restart-rdb',
    title: 'SAVE, A locks on a bare majority, the victim SIGKILLed and restarted from that RDB snapshot (targeted)',
    network: 'direct',
    targeted: 'restart-rdb',
    restartsNodes: true,
    // Redis's default persistence on every node; the phase after starts from empty data directories.
    setup: (ctx) => restartAllClean(ctx.supervisor, 'rdb'),
    teardown: (ctx) => restartAllClean(ctx.supervisor, 'none'),
    fault: (ctx) => targetedCycle(ctx, 'restart-rdb'),
    healMs: (ctx) => ttls(ctx, 0.5, 1),
  },
  'restart-stale-aof': {
    name: 'restart-stale-aof',
    title: 'aof-always → crash → none → A locks on a bare majority → crash → aof-always: the victim loads its old AOF (targeted)',
    network: 'direct',
    targeted: 'restart-stale-aof',
    restartsNodes: true,
    setup: (ctx) => restartAllClean(ctx.supervisor, 'aof-always'),
    teardown: (ctx) => restartAllClean(ctx.supervisor, 'none'),
    fault: (ctx) => targetedCycle(ctx, 'restart-stale-aof'),
    healMs: (ctx) => ttls(ctx, 0.5, 1),
  },
  'evict-volatile-lru': evictionNemesis('evict-volatile-lru', 'volatile-lru'),
  'evict-allkeys-random': evictionNemesis('evict-allkeys-random', 'allkeys-random'),
  'lose-data': {
    name: 'lose-data',
    title: 'A locks on a bare majority, the victim crashes and restarts without persistence: its data and sentinel gone (targeted)',
    network: 'direct',
    targeted: 'lose-data',
    restartsNodes: true,
    fault: (ctx) => targetedCycle(ctx, 'lose-data'),
    healMs: (ctx) => ttls(ctx, 0.5, 1),
  },
  'lose-majority': {
    name: 'lose-majority',
    title: "after A's fenced grant a majority of the nodes lose their data, fence registers included; B reaches only them (targeted)",
    network: 'direct',
    targeted: 'lose-majority',
    restartsNodes: true,
    fault: (ctx) => targetedCycle(ctx, 'lose-majority'),
    healMs: (ctx) => ttls(ctx, 0.5, 1),
  },
  'fence-stall': {
    name: 'fence-stall',
    title:
      "A's grant voted for by a bare majority, one voter of which stalls at the fence round; B sees the stalled node and the two A never reached (targeted)",
    network: 'direct',
    targeted: 'fence-stall',
    fault: (ctx) => targetedCycle(ctx, 'fence-stall'),
    healMs: (ctx) => ttls(ctx, 0.2, 0.5),
  },
  'short-max-ttl': {
    name: 'short-max-ttl',
    title: 'A locks on a bare majority, the victim loses its data, a client with a 10× shorter maxTtlMs sees it first (targeted)',
    network: 'direct',
    targeted: 'short-max-ttl',
    restartsNodes: true,
    fault: (ctx) => targetedCycle(ctx, 'short-max-ttl'),
    healMs: (ctx) => ttls(ctx, 0.5, 1),
  },
  'restart-rdb-late': {
    name: 'restart-rdb-late',
    title:
      'SAVE, A locks on a bare majority, the victim restarted from that snapshot; B asks again at half the ceiling, A still holding (targeted)',
    network: 'direct',
    targeted: 'restart-rdb-late',
    restartsNodes: true,
    setup: (ctx) => restartAllClean(ctx.supervisor, 'rdb'),
    teardown: (ctx) => restartAllClean(ctx.supervisor, 'none'),
    fault: (ctx) => targetedCycle(ctx, 'restart-rdb-late'),
    healMs: (ctx) => ttls(ctx, 0.5, 1),
  },
  'rollback-replicaof': {
    name: 'rollback-replicaof',
    title:
      'A locks on a bare majority; the victim is restored in place from its own older backup: REPLICAOF a side server, sync, REPLICAOF NO ONE (targeted)',
    network: 'direct',
    targeted: 'rollback-replicaof',
    fault: (ctx) => targetedCycle(ctx, 'rollback-replicaof'),
    healMs: (ctx) => ttls(ctx, 0.5, 1),
  },
  'rollback-reload': {
    name: 'rollback-reload',
    title: 'A locks on a bare majority; the victim reloads its own older dump in place: DEBUG RELOAD NOSAVE (targeted)',
    network: 'direct',
    targeted: 'rollback-reload',
    fault: (ctx) => targetedCycle(ctx, 'rollback-reload'),
    healMs: (ctx) => ttls(ctx, 0.5, 1),
  },
  'rollback-swapdb': {
    name: 'rollback-swapdb',
    title:
      "A locks on a bare majority; the victim's database 0 is swapped with one holding the prefix's older state or a second deployment's: SWAPDB (targeted)",
    network: 'direct',
    targeted: 'rollback-swapdb',
    fault: (ctx) => targetedCycle(ctx, 'rollback-swapdb'),
    healMs: (ctx) => ttls(ctx, 0.5, 1),
  },
  'clock-jump': {
    name: 'clock-jump',
    title:
      "A locks on a bare majority; the victim's wall clock (one node for the phase) steps 6–8 s forward (A's key expires there) or back (clock shim), then back to real time (targeted)",
    network: 'direct',
    targeted: 'clock-jump',
    // One node, for the whole phase, under the clock shim (started with it before any client
    // connects). A step back lengthens the quarantine a step forward started for the lock loops
    // (the core counts it in the node's time) by the step: with the victim drawn per cycle, three
    // nodes out at once left the loops without a quorum for seconds (1,240 acquisitions in 40 s).
    setup: (ctx) => shimVictim(ctx, true),
    teardown: (ctx) => shimVictim(ctx, false),
    // The last step back (a trial's clock back to real time, or a step back) lengthens the keys there.
    settleMs: CLOCK_STEP_MS.max,
    fault: (ctx) => targetedCycle(ctx, 'clock-jump'),
    healMs: (ctx) => ttls(ctx, 0.5, 1),
  },
};
