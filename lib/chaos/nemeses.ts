/**
 * The nemeses: each injects one kind of fault for a while, then heals it. A phase runs one
 * nemesis alone, in cycles of fault → heal, while the client processes keep locking.
 */
import type { Redis } from 'ioredis';
import type { ClusterSupervisor } from '../cluster';
import type { NemesisAction } from './history';
import type { ClientLinks, SkewLinks } from './links';
import { restartAllClean, type EvictionPolicy } from './node-ops';
import type { Rng } from './random';
import type { TrialKind, TrialResult } from './targeted';
import type { ClientWorker } from './workers';
import type { ClientSettings, HoldMix } from './worker-protocol';

export const NEMESIS_NAMES = [
  'none',
  'blackhole-minority',
  'blackhole-majority',
  'ring-partition',
  'latency',
  'connection-reset',
  'skew',
  'pause-node',
  'crash-aof',
  'crash-none-quarantine',
  'pause-client',
  'restart-rdb',
  'restart-stale-aof',
  'evict-volatile-lru',
  'evict-allkeys-random',
  'short-max-ttl',
  'lose-data',
  'lose-majority',
  'late-extend',
  'fence-stall',
] as const;
export type NemesisName = (typeof NEMESIS_NAMES)[number];

export type NetworkPath = 'direct' | 'node-proxies' | 'client-links' | 'skew';

export interface NemesisContext {
  supervisor: ClusterSupervisor;
  clients: readonly ClientWorker[];
  /** Indices of the clients that use fenced locks. */
  fencedClients: readonly number[];
  links: ClientLinks;
  skew: SkewLinks;
  rng: Rng;
  ttlMs: number;
  driftFactor: number;
  cycle: number;
  /** Direct admin connections to every redis-server (bypassing every proxy). */
  direct: readonly Redis[];
  /** The node a nemesis works on for its whole phase (chosen by its setup), if it has one. */
  victim: number | null;
  record(event: NemesisAction): void;
  /** Run one targeted trial (lib/chaos/targeted.ts) with the phase's core; its history joins the phase's. */
  trial(kind: TrialKind, options?: { victim?: number }): Promise<TrialResult>;
}

export interface Fault {
  label: string;
  /** How long the fault stays before it is healed, ms. */
  durationMs: number;
  heal(): Promise<void>;
}

export interface Nemesis {
  name: NemesisName;
  title: string;
  /**
   * Which way the clients reach the nodes in this phase: straight to the redis-server ports, through
   * the cluster's fault proxy of each node, through per-client fault proxies, or through the skew
   * proxies. Only the network faults need a fault proxy in the path (it costs CPU on this box).
   */
  network: NetworkPath;
  holds?: Partial<HoldMix>;
  /** Client settings of this nemesis's phase (e.g. faster retries), given the ttl. */
  settings?(ttlMs: number): Partial<ClientSettings>;
  reportHolds?: boolean;
  /** Fault cycles this nemesis needs at least, whatever the profile says. */
  minCycles?: number;
  /**
   * Each cycle is a targeted trial (lib/chaos/targeted.ts) that creates the danger on purpose; the
   * phase must show the safe core's defence in every one.
   */
  targeted?: TrialKind;
  /**
   * Every client reaches a quorum of nodes the whole time, with a node to spare or a bare one:
   * acquires must not fail for unavailability nor collapse in throughput (the liveness verdict,
   * lib/chaos/liveness.ts).
   */
  keepsQuorum?: 'spare' | 'bare';
  /** Nodes restart in this phase, so their command counts start over (the cost is a lower bound). */
  restartsNodes?: boolean;
  /** Before the first cycle / after the last heal (e.g. switch the nodes' persistence). */
  setup?(ctx: NemesisContext): Promise<void>;
  teardown?(ctx: NemesisContext): Promise<void>;
  /** Inject one fault (null: this nemesis does nothing). */
  fault(ctx: NemesisContext): Promise<Fault | null>;
  /** How long to stay healed after a fault, ms. */
  healMs(ctx: NemesisContext): number;
}

const ids = (nodes: readonly number[]) => nodes.map((n) => n + 1).join(',');
const allNodes = (ctx: NemesisContext) => Array.from({ length: ctx.supervisor.size }, (_, i) => i);
const ttls = (ctx: NemesisContext, min: number, max: number) => Math.round(ctx.rng.between(min, max) * ctx.ttlMs);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Blackhole `count` nodes on their proxies (every client loses them; held bytes flow on heal). */
async function blackhole(ctx: NemesisContext, count: number, min: number, max: number): Promise<Fault> {
  const nodes = ctx.rng.sample(allNodes(ctx), count);
  for (const n of nodes) await ctx.supervisor.partition(n + 1);
  return {
    label: `blackhole nodes ${ids(nodes)}`,
    durationMs: ttls(ctx, min, max),
    heal: async () => {
      for (const n of nodes) await ctx.supervisor.heal(n + 1);
    },
  };
}

async function restartAll(ctx: NemesisContext, persistence: 'aof-always' | 'none'): Promise<void> {
  for (const n of allNodes(ctx)) await ctx.supervisor.restart(n + 1, { persistence });
}

/** One cycle of a targeted nemesis: the trial records its own fault and heal (from the loss to B's answer). */
async function targetedCycle(ctx: NemesisContext, kind: TrialKind): Promise<Fault> {
  const r = await ctx.trial(kind, ctx.victim === null ? {} : { victim: ctx.victim });
  return { label: r.label, durationMs: 0, heal: async () => undefined };
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

async function crash(ctx: NemesisContext, persistence: 'aof-always' | 'none'): Promise<Fault> {
  const nodes = ctx.rng.sample(allNodes(ctx), ctx.rng.int(1, 2));
  for (const n of nodes) {
    await ctx.supervisor.crash(n + 1);
    // Without persistence the keys are gone from the moment of the crash.
    if (persistence === 'none') ctx.record({ kind: 'data-loss', node: n });
  }
  return {
    label: `crash nodes ${ids(nodes)}, restart with ${persistence}`,
    durationMs: ttls(ctx, 0.5, 2),
    heal: async () => {
      for (const n of nodes) await ctx.supervisor.start(n + 1, persistence);
    },
  };
}

export const NEMESES: Readonly<Record<NemesisName, Nemesis>> = {
  none: { name: 'none', keepsQuorum: 'spare', title: 'no fault', network: 'direct', fault: async () => null, healMs: () => 500 },
  'late-extend': {
    // No fault: the danger is the clients' own timing. The long loops' holds mostly make one extend
    // from a twentieth of the ttl before their validity ends to a fifth after it (the keys are still
    // there then): every one after the end must be refused (the hygiene checker's late extends).
    name: 'late-extend',
    keepsQuorum: 'spare',
    title: 'extends right around the end of the validity (no fault)',
    network: 'direct',
    holds: { lateExtendShare: 0.8, extendShare: 0.05, abandonShare: 0.05 },
    fault: async () => null,
    healMs: () => 500,
  },
  'blackhole-minority': {
    name: 'blackhole-minority',
    keepsQuorum: 'bare',
    title: 'blackhole 1–2 nodes (a minority) for 1–3 × ttl',
    network: 'node-proxies',
    fault: (ctx) => blackhole(ctx, ctx.rng.int(1, 2), 1, 3),
    healMs: (ctx) => ttls(ctx, 0.5, 1),
  },
  'blackhole-majority': {
    name: 'blackhole-majority',
    title: 'blackhole 3 nodes (a majority) for 1.2–2 × ttl',
    network: 'node-proxies',
    // Long loops mostly make long, extended holds: an extension during the fault is the test.
    holds: { extendShare: 0.7, abandonShare: 0.05, longTtls: 4 },
    fault: (ctx) => blackhole(ctx, 3, 1.2, 2),
    healMs: (ctx) => ttls(ctx, 1, 1.5),
  },
  'ring-partition': {
    name: 'ring-partition',
    keepsQuorum: 'bare',
    title: 'ring partition: client i reaches nodes i…i+2 only (dropped or refused links)',
    network: 'client-links',
    fault: async (ctx) => {
      const n = ctx.supervisor.size;
      const mode = ctx.cycle % 2 === 0 ? { kind: 'blackhole' as const } : { kind: 'reset' as const };
      const offset = ctx.rng.int(0, n - 1);
      const majority = Math.floor(n / 2) + 1;
      ctx.clients.forEach((_, c) => {
        for (let k = majority; k < n; k++) ctx.links.set(c, (offset + c + k) % n, mode);
      });
      return {
        label: `ring partition (${mode.kind}), client 1 sees nodes ${ids(Array.from({ length: majority }, (_, k) => (offset + k) % n))}`,
        durationMs: ttls(ctx, 1, 3),
        heal: async () => ctx.links.healAll(),
      };
    },
    healMs: (ctx) => ttls(ctx, 0.5, 1),
  },
  latency: {
    name: 'latency',
    title: 'latency 0.3–0.9 × ttl with 0.3 × ttl jitter on 1–5 nodes',
    network: 'node-proxies',
    // Rounds wait for slow nodes up to the validity horizon, so grants come close to the edge.
    settings: (ttlMs) => ({ nodeTimeoutMs: ttlMs }),
    fault: async (ctx) => {
      const nodes = ctx.rng.sample(allNodes(ctx), ctx.rng.int(1, ctx.supervisor.size));
      const latencyMs = ttls(ctx, 0.3, 0.9);
      const jitterMs = Math.round(0.3 * ctx.ttlMs);
      for (const n of nodes) await ctx.supervisor.act(n + 1, { action: 'latency', latencyMs, jitterMs });
      return {
        label: `latency ${latencyMs}+0..${jitterMs} ms on nodes ${ids(nodes)}`,
        durationMs: ttls(ctx, 1.5, 3),
        heal: async () => {
          for (const n of nodes) await ctx.supervisor.heal(n + 1);
        },
      };
    },
    healMs: (ctx) => ttls(ctx, 1, 2),
  },
  'connection-reset': {
    name: 'connection-reset',
    title: 'reset every connection to 1–3 nodes (and refuse new ones) for 0.2–1 × ttl',
    network: 'node-proxies',
    fault: async (ctx) => {
      const nodes = ctx.rng.sample(allNodes(ctx), ctx.rng.int(1, 3));
      for (const n of nodes) await ctx.supervisor.act(n + 1, { action: 'reset' });
      return {
        label: `reset nodes ${ids(nodes)}`,
        durationMs: ttls(ctx, 0.2, 1),
        heal: async () => {
          for (const n of nodes) await ctx.supervisor.heal(n + 1);
        },
      };
    },
    healMs: (ctx) => ttls(ctx, 0.5, 1.5),
  },
  skew: {
    name: 'skew',
    keepsQuorum: 'spare',
    title: 'clocks of 3–5 nodes run fast by 60–90 % of driftFactor (leases end early)',
    network: 'skew',
    // Waiters retry fast, so that a lease that ends early is taken over inside the drift window.
    holds: { abandonShare: 0.7, extendShare: 0.1, hotAbandonShare: 0.03 },
    settings: () => ({ retryDelayMs: 10, retryJitterMs: 10 }),
    fault: async (ctx) => {
      const nodes = ctx.rng.sample(allNodes(ctx), ctx.rng.int(3, ctx.supervisor.size));
      const rates = allNodes(ctx).map((n) => (nodes.includes(n) ? ctx.rng.between(0.6, 0.9) * ctx.driftFactor : 0));
      ctx.skew.setRates(rates);
      return {
        label: `skew nodes ${ids(nodes)} by ${rates
          .filter((r) => r > 0)
          .map((r) => `${(r * 100).toFixed(1)}%`)
          .join(', ')}`,
        durationMs: ttls(ctx, 3, 6),
        heal: async () => ctx.skew.setRates([]),
      };
    },
    healMs: (ctx) => ttls(ctx, 0.25, 0.5),
  },
  'pause-node': {
    name: 'pause-node',
    keepsQuorum: 'spare',
    title: 'pause one redis-server (SIGSTOP) for 0.5–3 × ttl',
    network: 'direct',
    fault: async (ctx) => {
      const node = ctx.rng.int(0, ctx.supervisor.size - 1);
      await ctx.supervisor.pause(node + 1);
      return {
        label: `pause node ${node + 1}`,
        durationMs: ttls(ctx, 0.5, 3),
        heal: async () => void (await ctx.supervisor.resume(node + 1)),
      };
    },
    healMs: (ctx) => ttls(ctx, 0.5, 1),
  },
  'crash-aof': {
    name: 'crash-aof',
    title: 'crash 1–2 nodes (SIGKILL), restart with aof-always after 0.5–2 × ttl (each sits out maxTtlMs)',
    network: 'direct',
    restartsNodes: true,
    setup: (ctx) => restartAll(ctx, 'aof-always'),
    teardown: (ctx) => restartAll(ctx, 'none'),
    fault: (ctx) => crash(ctx, 'aof-always'),
    healMs: (ctx) => ttls(ctx, 1, 2),
  },
  'crash-none-quarantine': {
    name: 'crash-none-quarantine',
    title: 'crash 1–2 nodes, restart without persistence (quarantine on)',
    network: 'direct',
    restartsNodes: true,
    fault: (ctx) => crash(ctx, 'none'),
    healMs: (ctx) => ttls(ctx, 1, 2),
  },
  'pause-client': {
    name: 'pause-client',
    keepsQuorum: 'spare',
    title: 'pause a client process (SIGSTOP) for 2 × ttl: the holder, or one in the middle of an acquire',
    network: 'direct',
    reportHolds: true,
    minCycles: 8,
    // Holds long enough (up to 40 ms) that a pause lands inside one.
    holds: { shortMaxMs: 40 },
    fault: async (ctx) => {
      const pauseMs = 2 * ctx.ttlMs;
      if (ctx.cycle % 2 === 0) {
        // The holder (alternately an unfenced and a fenced one): the client whose hold began last.
        const fenced = ctx.cycle % 4 === 2;
        for (let i = 0; i < 100; i++) {
          const holders = ctx.clients.filter((c) => c.holds.size > 0 && !c.paused);
          const preferred = holders.filter((c) => ctx.fencedClients.includes(c.index) === fenced);
          const pool = preferred.length ? preferred : holders;
          const target = pool.sort((a, b) => b.lastHoldAt - a.lastHoldAt)[0];
          if (target) {
            // Recorded: the hygiene checker judges validity in the client's own running time.
            ctx.record({ kind: 'client-stop', client: target.index });
            target.pause();
            return {
              label: `pause holder client ${target.index + 1}`,
              durationMs: pauseMs,
              heal: async () => {
                target.resume();
                ctx.record({ kind: 'client-resume', client: target.index });
              },
            };
          }
          await sleep(2);
        }
        return null;
      }
      // Mid-acquire: the client stops itself once its next acquire has sent its commands (the
      // runner resumes it); alternately an unfenced and a fenced client.
      const fenced = ctx.cycle % 4 === 3;
      const pool = ctx.clients.filter((c) => ctx.fencedClients.includes(c.index) === fenced);
      const target = ctx.rng.pick(pool.length ? pool : ctx.clients);
      target.armSelfStop(pauseMs);
      // The runner's timer resumes it pauseMs after it has stopped (the phase's end resumes every client).
      return { label: `pause client ${target.index + 1} mid-acquire`, durationMs: pauseMs, heal: async () => undefined };
    },
    healMs: (ctx) => ttls(ctx, 0.5, 1),
  },
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
};
