/**
 * The scripted controls' trials (chaos/harness/controls.ts): the restart and pause scenarios, each
 * run with clients A and B on a fresh prefix.
 */
import { join } from 'node:path';
import { analyzePhase, type PhaseAnalysis } from './analyze';
import type { ClientEvent, NemesisEvent, RegisterRecord } from './history';
import { Rng } from './random';
import { clientSettings, markPrefixClean, now, readJsonLines, type CoreBuild, type RunContext } from './run-context';
import type { ClientSettings } from './worker-protocol';
import type { ClientWorker } from './workers';

interface Granted {
  granted: boolean;
  fence?: number | null;
  votes?: string;
  error?: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Run one scripted trial with clients A and B on a fresh prefix, then check its history. */
export async function trial(
  run: RunContext,
  id: string,
  settings: ClientSettings,
  core: CoreBuild,
  urls: string[],
  script: (a: ClientWorker, b: ClientWorker, nemesis: NemesisEvent[]) => Promise<void>,
): Promise<PhaseAnalysis> {
  const [a, b] = run.workers.clients;
  if (!a || !b) throw new Error('controls need two client processes');
  await markPrefixClean(run, settings.keyPrefix, settings.maxTtlMs);
  run.workers.register.reset();
  const logs = [a, b].map((c) => join(run.workDir, `${id}.client-${c.index}.jsonl`));
  const nemesis: NemesisEvent[] = [];
  await a.rpc({
    op: 'open',
    corePath: core.indexPath,
    urls,
    settings,
    registerPort: run.workers.register.port,
    logPath: logs[0]!,
    tag: id,
  });
  await b.rpc({
    op: 'open',
    corePath: core.indexPath,
    urls,
    settings,
    registerPort: run.workers.register.port,
    logPath: logs[1]!,
    tag: id,
  });
  try {
    await script(a, b, nemesis);
  } finally {
    a.resume();
    await Promise.all([a.rpc({ op: 'close' }), b.rpc({ op: 'close' })]);
  }
  const registerPath = join(run.workDir, `${id}.register.jsonl`);
  await run.workers.register.dump(registerPath);
  const events = logs.flatMap((p) => readJsonLines<ClientEvent>(p));
  return analyzePhase(
    { events, register: readJsonLines<RegisterRecord>(registerPath), nemesis, leakedKeys: [] },
    { toleranceMs: settings.maxTtlMs / 2, end: now(run) },
  );
}

/** The seeds' restart scenario, timed so that the restarted node is in the holder's majority. */
export async function restartTrial(
  run: RunContext,
  core: CoreBuild,
  seed: number,
  quarantine: boolean,
): Promise<{ overlap: boolean; detail: string }> {
  const { supervisor } = run;
  const ttl = run.profile.controlTtlMs;
  const rng = new Rng(seed);
  const order = rng.sample([0, 1, 2, 3, 4], 5);
  const majority = order.slice(0, 3);
  const others = order.slice(3);
  const restarted = rng.pick(majority);
  const id = `ctl-restart-${quarantine ? 'q' : 'noq'}-${seed}`;
  const settings = clientSettings(run, `chaos:${run.runId}:${id}:`, { maxTtlMs: ttl, quarantine, retryDelayMs: 20, retryJitterMs: 10 });
  let detail = '';
  const analysis = await trial(run, id, settings, core, supervisor.urls(), async (a, b, nemesis) => {
    // A reaches only the majority: its SETs to the others wait in the blackholed proxies, which
    // then reset those connections (as a real partition eventually does), so A holds exactly the majority.
    // A has met every node first (its first grant on a node brings the node's check), so that its
    // one attempt below is not lost to a slow first check on a loaded machine.
    const warm = (await a.rpc({ op: 'acquire', resource: 'f:ctl.warm', ttlMs: ttl, fenced: true, retryCount: 10 })) as Granted;
    if (warm.granted) await a.rpc({ op: 'release', resource: 'f:ctl.warm' });
    for (const n of others) await supervisor.partition(n + 1);
    const lockA = (await a.rpc({ op: 'acquire', resource: 'f:ctl', ttlMs: ttl, fenced: true, retryCount: 0 })) as Granted;
    for (const n of others) await supervisor.act(n + 1, { action: 'reset' });
    for (const n of others) await supervisor.heal(n + 1);
    if (!lockA.granted) {
      detail = `seed ${seed}: A was not granted (${lockA.error ?? '?'})`;
      return;
    }
    await supervisor.crash(restarted + 1);
    nemesis.push({ t: now(run), kind: 'data-loss', node: restarted });
    await supervisor.start(restarted + 1, 'none');
    // Retries for ~2 s at most (20–30 ms apart), within A's lease: the restarted node needs a
    // moment before B's connection to it is up again (a loaded machine took longer than 25 retries).
    const lockB = (await b.rpc({ op: 'acquire', resource: 'f:ctl', ttlMs: ttl, fenced: true, retryCount: 80 })) as Granted;
    detail =
      `seed ${seed}: A held nodes ${majority.map((n) => n + 1).join(',')} (votes ${lockA.votes}), node ${restarted + 1} restarted empty; ` +
      (lockB.granted ? `B granted (votes ${lockB.votes}, fence ${lockB.fence} after A's ${lockA.fence})` : `B refused (${lockB.error})`);
    await a.rpc({ op: 'write', resource: 'f:ctl' });
    if (lockB.granted) await b.rpc({ op: 'write', resource: 'f:ctl' });
    await b.rpc({ op: 'release', resource: 'f:ctl' });
    await a.rpc({ op: 'release', resource: 'f:ctl' });
  });
  return { overlap: analysis.overlap.overlaps > 0, detail };
}

/** The holder pauses mid-hold for 2 × ttl; B takes over and writes; the holder wakes and writes. */
export async function pauseTrial(run: RunContext, core: CoreBuild, index: number, fenced: boolean): Promise<PhaseAnalysis> {
  const ttl = run.profile.ttlMs;
  const id = `ctl-pause-${fenced ? 'fenced' : 'unfenced'}-${index}`;
  const resource = fenced ? 'f:pause' : 'u:pause';
  const settings = clientSettings(run, `chaos:${run.runId}:${id}:`, { retryDelayMs: 20, retryJitterMs: 10 });
  return trial(run, id, settings, core, run.supervisor.directUrls(), async (a, b) => {
    const lockA = (await a.rpc({ op: 'acquire', resource, ttlMs: ttl, fenced, retryCount: 0 })) as Granted;
    if (!lockA.granted) throw new Error(`control ${id}: A was not granted (${lockA.error ?? '?'})`);
    await a.rpc({ op: 'write', resource });
    const pausedAt = performance.now();
    a.pause();
    // Delivered now, run when A wakes: the write of a client that did not notice its pause.
    const lateWrite = a.rpc({ op: 'write', resource });
    const lockB = (await b.rpc({ op: 'acquire', resource, ttlMs: ttl, fenced, retryCount: 100 })) as Granted;
    if (lockB.granted) {
      await b.rpc({ op: 'write', resource });
      await b.rpc({ op: 'release', resource });
    }
    await sleep(Math.max(0, 2 * ttl - (performance.now() - pausedAt)));
    a.resume();
    await lateWrite;
    await a.rpc({ op: 'release', resource });
  });
}
