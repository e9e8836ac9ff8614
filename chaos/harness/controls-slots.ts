/**
 * The negative control of the slot checkers (chaos/harness/check-slots.ts), the restart control's
 * scenario (controls-scripted.ts) on a semaphore and a read-write lock: A holds both permits of a
 * 2-permit semaphore and a read lock, each on exactly a majority; one node of that majority restarts
 * without persistence; B asks for one permit and for the write lock. With `quarantine: false` the
 * restarted node votes for B, whose grants then make three permits of two held at once (capacity) and
 * a writer beside a reader (rw-exclusion); with the quarantine on, B is refused both.
 */
import type { ControlOutcome } from './controls-outcome';
import { trial } from './controls-scripted';
import { Rng } from './random';
import { clientSettings, now, type CoreBuild, type RunContext } from './run-context';
import type { RpcOp } from './worker-protocol';
import type { ClientWorker } from './workers';

interface SlotGranted {
  granted: boolean;
  slots?: number[];
  votes?: string;
}

type SlotOp = Extract<RpcOp, { op: 'acquire-slots' }>;

const SEM = { kind: 'sem', name: 's2', limit: 2 } as const;
const RW = { name: 'w2', limit: 2, permits: 1 } as const;

function ask(c: ClientWorker, op: Omit<SlotOp, 'op'>): Promise<SlotGranted> {
  return c.rpc({ op: 'acquire-slots', ...op }) as Promise<SlotGranted>;
}

/** One seed of the scenario; what the slot checkers found. */
export async function slotRestartTrial(
  run: RunContext,
  core: CoreBuild,
  seed: number,
  quarantine: boolean,
): Promise<{ capacity: boolean; rw: boolean; other: number; detail: string }> {
  const { supervisor } = run;
  const ttl = run.profile.controlTtlMs;
  const rng = new Rng(seed);
  const order = rng.sample([0, 1, 2, 3, 4], 5);
  const majority = order.slice(0, 3);
  const others = order.slice(3);
  const restarted = rng.pick(majority);
  const id = `ctl-slots-${quarantine ? 'q' : 'noq'}-${seed}`;
  const settings = clientSettings(run, `chaos:${run.runId}:${id}:`, { maxTtlMs: ttl, quarantine, retryDelayMs: 20, retryJitterMs: 10 });
  const common = { ttlMs: ttl, fenced: true };
  let detail = '';
  const analysis = await trial(run, id, settings, core, supervisor.urls(), async (a, b, nemesis) => {
    // A meets every node first (as the restart control's A), then reaches only the majority.
    const warm = (await a.rpc({ op: 'acquire', resource: 'f:ctl.warm', ttlMs: ttl, fenced: true, retryCount: 10 })) as { granted: boolean };
    if (warm.granted) await a.rpc({ op: 'release', resource: 'f:ctl.warm' });
    for (const n of others) await supervisor.partition(n + 1);
    const [permitA, readA] = await Promise.all([
      ask(a, { ...SEM, ...common, permits: 2, retryCount: 0 }),
      ask(a, { ...RW, ...common, kind: 'read', retryCount: 0 }),
    ]);
    for (const n of others) await supervisor.act(n + 1, { action: 'reset' });
    for (const n of others) await supervisor.heal(n + 1);
    if (!permitA.granted || !readA.granted) {
      detail = `seed ${seed}: A was not granted (permits ${permitA.granted}, read ${readA.granted})`;
      return;
    }
    await supervisor.crash(restarted + 1);
    nemesis.push({ t: now(run), kind: 'data-loss', node: restarted });
    await supervisor.start(restarted + 1, 'none');
    // Retries for ~1.5 s (20–30 ms apart), within A's lease (as the restart control's B).
    const [permitB, writeB] = await Promise.all([
      ask(b, { ...SEM, ...common, permits: 1, retryCount: 60 }),
      ask(b, { ...RW, ...common, kind: 'write', retryCount: 60 }),
    ]);
    detail =
      `seed ${seed}: A held 2 permits (votes ${permitA.votes}) and a read lock (votes ${readA.votes}) on nodes ` +
      `${majority.map((n) => n + 1).join(',')}, node ${restarted + 1} restarted empty; B ` +
      `${permitB.granted ? `granted a permit (slot ${permitB.slots?.join(',')}, votes ${permitB.votes})` : 'refused a permit'}, ` +
      `${writeB.granted ? `granted the write lock (votes ${writeB.votes})` : 'refused the write lock'}`;
    await Promise.all([a.rpc({ op: 'write', resource: 'sem:s2' }), a.rpc({ op: 'write', resource: 'read:w2' })]);
    for (const [granted, resource] of [
      [permitB.granted, 'sem:s2'],
      [writeB.granted, 'write:w2'],
    ] as const) {
      if (!granted) continue;
      await b.rpc({ op: 'write', resource });
      await b.rpc({ op: 'release', resource });
    }
    await Promise.all([a.rpc({ op: 'release', resource: 'sem:s2' }), a.rpc({ op: 'release', resource: 'read:w2' })]);
  });
  const s = analysis.slots;
  return {
    capacity: s.capacity.violations > 0,
    rw: s.rwExclusion.violations > 0,
    other: analysis.violations - s.capacity.violations - s.rwExclusion.violations,
    detail,
  };
}

/** The control and its safe twin (`seeds` for the control, the first `twinSeeds` of them for the twin). */
export async function slotControls(
  run: RunContext,
  core: CoreBuild,
  seeds: readonly number[],
  twinSeeds: number,
  wanted: (name: string) => boolean,
): Promise<ControlOutcome[]> {
  const outcomes: ControlOutcome[] = [];
  if (wanted('slots-no-quarantine')) {
    const details: string[] = [];
    let found = 0;
    for (const s of seeds) {
      const r = await slotRestartTrial(run, core, s, false);
      if (r.capacity && r.rw) found++;
      details.push(`${r.capacity ? 'capacity' : 'NO capacity'} and ${r.rw ? 'rw-exclusion' : 'NO rw-exclusion'} found: ${r.detail}`);
    }
    const need = Math.ceil(seeds.length * 0.9);
    outcomes.push({
      name: 'slots-no-quarantine',
      nemesis: 'crash-none-quarantine',
      expectation: `quarantine: false: more permits than the limit (capacity) and a writer with a reader (rw-exclusion) both found in ≥ ${need} of ${seeds.length} seeds`,
      negative: true,
      trials: seeds.length,
      found,
      passed: found >= need,
      details,
    });
  }
  if (wanted('slots-quarantine')) {
    const details: string[] = [];
    let found = 0;
    for (const s of seeds.slice(0, twinSeeds)) {
      const r = await slotRestartTrial(run, core, s, true);
      const any = r.capacity || r.rw || r.other > 0;
      if (any) found++;
      details.push(`${any ? 'VIOLATION' : 'no violation'}: ${r.detail}`);
    }
    outcomes.push({
      name: 'slots-quarantine',
      nemesis: 'crash-none-quarantine',
      expectation: 'quarantine on: no violation of any checker in any seed',
      negative: false,
      trials: twinSeeds,
      found,
      passed: found === 0,
      details,
    });
  }
  return outcomes;
}
