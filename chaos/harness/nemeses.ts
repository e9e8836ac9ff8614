import { quorumSize } from '@redlock-console/redlock';
/**
 * The nemeses: each injects one kind of fault for a while, then heals it. A phase runs one
 * nemesis alone, in cycles of fault → heal, while the client processes keep locking.
 */
import { ttls, type Fault, type Nemesis, type NemesisContext, type NemesisName } from './nemeses-kinds';
import { TARGETED_NEMESES } from './nemeses-targeted';

export { NEMESIS_NAMES, type Fault, type Nemesis, type NemesisContext, type NemesisName, type NetworkPath } from './nemeses-kinds';

const ids = (nodes: readonly number[]) => nodes.map((n) => n + 1).join(',');
const allNodes = (ctx: NemesisContext) => Array.from({ length: ctx.supervisor.size }, (_, i) => i);
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
      const majority = quorumSize(n);
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
  ...TARGETED_NEMESES,
};
