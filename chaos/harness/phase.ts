/**
 * One phase: the client processes lock in loops while one nemesis injects faults in cycles; then
 * heal, stop, wait for quiescence + ttl, scan for leaked keys, collect the history and check it.
 */
import { join } from 'node:path';
import { analyzePhase, type PhaseAnalysis } from './analyze';
import type { ClientEvent, NemesisEvent, RegisterRecord } from './history';
import { NEMESES, type Fault, type NemesisContext, type NemesisName, type NetworkPath } from './nemeses';
import { Rng } from './random';
import {
  clientSettings,
  markPrefixClean,
  now,
  readCommandStats,
  readJsonLines,
  recorder,
  resetCommandStats,
  scanLeakedKeys,
  scanLiveKeys,
  type CoreBuild,
  type RunContext,
} from './run-context';
import { commandCost, type CommandCost } from './stats';
import { runTrial, UNARMED_RETRIES, type TrialResult } from './targeted';
import type { ClientSettings, LoopConfig } from './worker-protocol';

export interface PhaseSpec {
  /** Unique in the run: names the key prefix and the logs. */
  id: string;
  nemesis: NemesisName;
  core: CoreBuild;
  target: number;
  maxMs: number;
  minCycles: number;
  seed: number;
  settings?: Partial<ClientSettings>;
  /** Which loops the clients run: the lock loops and the slot loops (default), or the slot loops alone (a mutant aimed at them). */
  loops?: 'all' | 'slots';
}

export interface PhaseOutcome {
  id: string;
  nemesis: NemesisName;
  title: string;
  core: string;
  durationMs: number;
  cycles: number;
  faults: string[];
  analysis: PhaseAnalysis;
  cost: CommandCost;
  /** Fewer successful acquisitions than the target (the phase hit its time limit). */
  shortfall: boolean;
  /** Unhandled promise rejections the client processes reported (robustness, not safety). */
  clientErrors: string[];
  /** The targeted trials of the phase, one per cycle (targeted nemeses only). */
  trials: TrialResult[];
}

export function clientUrls(run: RunContext, path: NetworkPath, client: number): string[] {
  switch (path) {
    case 'direct':
      return run.supervisor.directUrls();
    case 'node-proxies':
      return run.supervisor.urls();
    case 'client-links':
      return run.links.urls(client);
    case 'skew':
      return run.skew.urls();
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const MAX_FAULT_LABELS = 12;

export async function runPhase(run: RunContext, spec: PhaseSpec): Promise<PhaseOutcome> {
  const nemesis = NEMESES[spec.nemesis];
  const { profile, workers } = run;
  const ttl = profile.ttlMs;
  const rng = new Rng(spec.seed);
  const keyPrefix = `chaos:${run.runId}:${spec.id}:`;
  const nemesisLog: NemesisEvent[] = [];
  const trials: TrialResult[] = [];
  const ctx = nemesisContext(run, spec, rng, recorder(run, nemesisLog), trials);

  const t0 = performance.now();
  const step = (what: string) => run.log(`  [${spec.id}] ${what} at ${Math.round(performance.now() - t0)} ms`);
  await nemesis.setup?.(ctx);
  // Reset the nodes' statistics before the sentinels are written: a sentinel records the node's
  // evicted_keys, which CONFIG RESETSTAT sets back to 0 (an eviction check compares the two).
  await resetCommandStats(run);
  await markPrefixClean(run, keyPrefix, ttl);
  workers.register.reset();
  const { loops, logs } = startLoops(run, spec, keyPrefix, rng);
  // A client that fails stops the phase at once (its error is reported after the cleanup).
  let failure: unknown = null;
  const settled = Promise.all(loops).catch((err: unknown) => {
    failure ??= err;
  });

  step('clients started');
  const started = performance.now();
  const successes = () => workers.clients.reduce((sum, c) => sum + c.progress.ok, 0);
  const faults = await faultCycles(run, spec, ctx, started, successes, () => failure === null);
  let stopTimer: NodeJS.Timeout | undefined;
  await Promise.race([
    settled,
    new Promise<void>((resolve) => {
      stopTimer = setTimeout(() => {
        failure ??= new Error(`phase ${spec.id}: the clients did not stop within 60 s`);
        resolve();
      }, 60_000);
    }),
  ]);
  clearTimeout(stopTimer);
  if (failure !== null) throw failure;
  const durationMs = performance.now() - started;
  step(`clients stopped (${successes()} acquisitions, ${ctx.cycle} cycles)`);

  const { analysis, commandStats } = await collectHistory(run, spec, ctx, keyPrefix, logs, trials, nemesisLog);
  step('history collected');
  return {
    id: spec.id,
    nemesis: spec.nemesis,
    title: nemesis.title,
    core: spec.core.name,
    durationMs: Math.round(durationMs),
    cycles: ctx.cycle,
    faults,
    analysis,
    cost: commandCost(commandStats, analysis.acquisitions.successes),
    shortfall: analysis.acquisitions.successes < spec.target,
    clientErrors: workers.clients.flatMap((c) => c.unhandled),
    trials,
  };
}

/** What the phase's nemesis acts through: the cluster, the clients, the clocks, and its targeted trials (kept in `trials`). */
function nemesisContext(
  run: RunContext,
  spec: PhaseSpec,
  rng: Rng,
  record: NemesisContext['record'],
  trials: TrialResult[],
): NemesisContext {
  const { profile, workers, supervisor } = run;
  const ctx: NemesisContext = {
    supervisor,
    clients: workers.clients,
    fencedClients: workers.clients.slice(0, profile.fencedClients).map((c) => c.index),
    links: run.links,
    skew: run.skew,
    rng,
    ttlMs: profile.ttlMs,
    driftFactor: profile.driftFactor,
    cycle: 0,
    direct: run.direct,
    victim: null,
    clocks: run.clocks,
    record,
    trial: async (kind, options = {}) => {
      // A prefix of its own (under the phase's, fresh) and the phase's core; the trial's sessions
      // run in client processes 0–2 beside their lock loops, and their logs join the phase's history.
      // A trial whose danger was not in place (A not granted on exactly the majority, on a loaded
      // machine) proves nothing: it runs again, at most UNARMED_RETRIES times. Every run's history
      // stays in the phase's, so a violation in one is never retried away.
      let result: TrialResult;
      for (let k = 0; ; k++) {
        result = await runTrial(run, {
          kind,
          id: `${spec.id}.t${ctx.cycle}${k === 0 ? '' : `r${k}`}`,
          core: spec.core,
          seed: rng.fork(1_000 + ctx.cycle + k * 10_000),
          settings: spec.settings,
          record,
          ...options,
        });
        if (result.armed || result.defended || k === UNARMED_RETRIES) break;
        run.log(`  [${spec.id}] trial ${ctx.cycle}: the danger was not in place (${result.detail}); again on another seed`);
      }
      trials.push(result);
      run.log(
        `  [${spec.id}] trial ${ctx.cycle}: ${result.defended ? 'defended' : 'NOT defended'} (${result.defence ?? 'no defence seen'}); ${result.detail}`,
      );
      return result;
    },
  };
  return ctx;
}

/** Start every client process's lock loops for the phase (fenced clients first); each writes its history to its log. */
function startLoops(run: RunContext, spec: PhaseSpec, keyPrefix: string, rng: Rng): { loops: Promise<unknown>[]; logs: string[] } {
  const nemesis = NEMESES[spec.nemesis];
  const { profile, workers } = run;
  const ttl = profile.ttlMs;
  const settings = clientSettings(run, keyPrefix, { ...nemesis.settings?.(ttl), ...spec.settings });
  const holds = { ...profile.holds, ...nemesis.holds };
  const logs = workers.clients.map((c) => join(run.workDir, `${spec.id}.client-${c.index}.jsonl`));
  const loops = workers.clients.map((c, i) => {
    const fenced = i < profile.fencedClients;
    const kind = fenced ? 'f' : 'u';
    const resources = Array.from({ length: fenced ? profile.fencedResources : profile.unfencedResources }, (_, r) => `${kind}:r${r}`);
    const config: LoopConfig = {
      phase: spec.id,
      corePath: spec.core.indexPath,
      urls: clientUrls(run, nemesis.network, i),
      settings,
      ttlMs: ttl,
      fenced,
      resources,
      longResources: [`${kind}:long`],
      loops: spec.loops === 'slots' ? 0 : profile.loopsPerClient,
      longLoops: spec.loops === 'slots' ? 0 : profile.longLoopsPerClient,
      slotLoops: spec.loops === 'slots' ? profile.loopsPerClient + profile.longLoopsPerClient : profile.slotLoopsPerClient,
      slotObjects: profile.slotObjects,
      seed: rng.fork(i),
      holds,
      maxMs: spec.maxMs + 5_000,
      reportHolds: nemesis.reportHolds ?? false,
      logPath: logs[i]!,
      registerPort: workers.register.port,
    };
    return c.loop(config);
  });
  return { loops, logs };
}

/**
 * The nemesis's fault cycles until the phase has its acquisitions and cycles (or its time runs
 * out, or a client failed); then everything healed and the clients stopped. The faults' labels.
 */
async function faultCycles(
  run: RunContext,
  spec: PhaseSpec,
  ctx: NemesisContext,
  started: number,
  successes: () => number,
  healthy: () => boolean,
): Promise<string[]> {
  const nemesis = NEMESES[spec.nemesis];
  const faults: string[] = [];
  let active: Fault | null = null;
  try {
    await sleep(200);
    while (healthy()) {
      const elapsed = performance.now() - started;
      if ((successes() >= spec.target && ctx.cycle >= spec.minCycles) || elapsed >= spec.maxMs) break;
      active = await nemesis.fault(ctx);
      if (active) {
        ctx.record({ kind: 'fault', what: active.label });
        if (faults.length < MAX_FAULT_LABELS) faults.push(active.label);
        await sleep(active.durationMs);
        await active.heal();
        ctx.record({ kind: 'heal', what: active.label });
        active = null;
      }
      ctx.cycle++;
      await sleep(nemesis.healMs(ctx));
    }
  } finally {
    if (active) {
      await active.heal().catch(() => undefined);
      ctx.record({ kind: 'heal', what: active.label });
    }
    run.links.healAll();
    run.skew.setRates([]);
    for (const c of run.workers.clients) c.stop();
    run.workers.resumeAll();
  }
  return faults;
}

/**
 * Quiescence: every fault healed and every client stopped. Read the keys while they would still
 * be live (what a rejected or released acquire left), let every lease run out, then read what
 * leaked, the command counts and the register, and check the whole history.
 */
async function collectHistory(
  run: RunContext,
  spec: PhaseSpec,
  ctx: NemesisContext,
  keyPrefix: string,
  logs: readonly string[],
  trials: readonly TrialResult[],
  nemesisLog: NemesisEvent[],
): Promise<{ analysis: PhaseAnalysis; commandStats: Awaited<ReturnType<typeof readCommandStats>> }> {
  const nemesis = NEMESES[spec.nemesis];
  const ttl = run.profile.ttlMs;
  const liveKeys = await scanLiveKeys(run, [keyPrefix, ...trials.map((t) => t.prefix)]);
  const liveSlotKeys = await scanLiveKeys(run, [keyPrefix], 'slots');
  await sleep(ttl + 300 + (nemesis.settleMs ?? 0));
  const leakedKeys = await scanLeakedKeys(run, keyPrefix);
  const leakedSlotKeys = await scanLeakedKeys(run, keyPrefix, 'slots');
  const commandStats = await readCommandStats(run);
  const registerPath = join(run.workDir, `${spec.id}.register.jsonl`);
  await run.workers.register.dump(registerPath);
  await nemesis.teardown?.(ctx);
  const events = [...logs, ...trials.flatMap((t) => t.logs)].flatMap((path) => readJsonLines<ClientEvent>(path));
  const register = readJsonLines<RegisterRecord>(registerPath);
  const analysis = analyzePhase(
    { events, register, nemesis: nemesisLog, leakedKeys, liveKeys, leakedSlotKeys, liveSlotKeys },
    { toleranceMs: ttl / 2, end: now(run) },
  );
  return { analysis, commandStats };
}
