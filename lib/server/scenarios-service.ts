import 'server-only';
import type { RunAction, RunActionBody, RunResponse, ScenarioList, StartRunBody } from '../api/scenarios';
import { randomSeed, SCENARIOS, scenarioById, ScenarioRun } from '../scenarios';
import { SandboxOverlapError, sharedEndpoints } from '../scenarios/separation';
import { recordAudit } from './audit';
import { publishEvent } from './events';
import { actorOf, type Principal } from './auth/principal';
import { badRequest, conflict, HttpError, notFound } from './http/errors';
import { leaseHolder, takeLease, type HeldLease, type LeaseHolder } from './console-lease';
import { exhaustive } from '../exhaustive';
import { getRuntime } from './runtime';
import { auditedControl } from './scenario-audit';
import { mainMasters, sandboxControl, sandboxProblem, whereSentence } from './scenario-sandbox';

type State = { current: ScenarioRun | null; releasing: Promise<void> };
const run: State = { current: null, releasing: Promise.resolve() };

/** The one scenario run of this server. */
function state(): State {
  return run;
}

/**
 * One run at a time across every console on these masters: the `scenario-run` lease
 * (console-lease.ts), taken before the run's first step and given back when it ends. A console
 * whose lease is not renewed (the masters out of its reach past the lease's TTL) cancels its run:
 * another console may start one then.
 */
async function runLease(what: string, cancel: (why: string) => void): Promise<HeldLease> {
  // This console's last run gives its lease back first (a restart follows its own cancel).
  await state().releasing;
  const taken = await takeLease('scenario-run', what, cancel);
  if ('held' in taken) return taken.held;
  throw conflict(
    taken.holder
      ? runningElsewhere(taken.holder)
      : 'the masters did not answer for the one-run-at-a-time lease (a majority is needed); try again',
  );
}

/** Why runs cannot start here (no teaching sandbox), or null. */
function unavailable(): string | null {
  return sandboxProblem(getRuntime());
}

/** The teaching sandbox's nodes now, for the sentence saying where runs run (null: it does not answer). */
async function sandboxNodes() {
  return (
    (await sandboxControl()
      ?.nodes()
      .catch(() => null)) ?? null
  );
}

/** A run another console holds the lease for, in words (the 409 and the catalog's unavailable state say it alike). */
function runningElsewhere(holder: LeaseHolder): string {
  return `${holder.what} on console ${holder.instance} (since ${new Date(holder.since).toISOString()}); only one run at a time across the consoles on these masters — cancel it there first`;
}

export async function listScenarios(): Promise<ScenarioList> {
  const current = state().current;
  let problem = unavailable();
  // Another console's run: the catalog says so, and its start buttons are off (the screen's unavailable state).
  if (problem === null && !current?.active) {
    // This console's own run that just ended gives its lease back first (not "running elsewhere").
    await state().releasing;
    const holder = await leaseHolder('scenario-run').catch(() => null);
    if (holder) problem = runningElsewhere(holder);
  }
  const nodes = problem === null ? await sandboxNodes() : null;
  return {
    scenarios: SCENARIOS.map((s) => ({
      id: s.id,
      number: s.number,
      title: s.title,
      summary: s.summary,
      lesson: s.lesson,
      estimatedSeconds: s.estimatedSeconds,
      tags: [...s.tags],
    })),
    available: problem === null,
    problem,
    where: nodes ? whereSentence(nodes).replace(/^This run runs/, 'Runs run') : null,
    current: current ? { runId: current.runId, scenarioId: current.scenarioId, status: current.status } : null,
  };
}

async function begin(
  principal: Principal,
  id: string,
  seed: number,
  speed: StartRunBody['speed'],
  restartOf: string | null,
): Promise<ScenarioRun> {
  const scenario = scenarioById(id);
  if (!scenario) throw notFound(`there is no scenario "${id}"`);
  const problem = unavailable();
  if (problem) throw new HttpError(409, 'NOT_SANDBOX', problem);
  const control = sandboxControl()!;
  const runtime = getRuntime();
  const nodes = await control.nodes().catch((err: Error) => {
    throw new HttpError(409, 'NOT_SANDBOX', `the teaching sandbox does not answer: ${err.message}`);
  });
  const main = await mainMasters(runtime);
  const shared = sharedEndpoints(
    nodes.map((n) => ({ id: n.id, urls: [n.url, n.directUrl] })),
    main.urls,
  );
  // The run checks again, run_ids included, before its first command (ScenarioCluster.open).
  if (shared.length > 0) throw new HttpError(409, 'NOT_SANDBOX', new SandboxOverlapError(shared).message);
  const s = state();
  if (s.current?.active) {
    const v = s.current.view();
    throw conflict(
      `scenario ${v.number} (${v.title}) is ${v.status === 'restoring' ? 'restoring the cluster' : 'running'}, started by ${v.startedBy}; only one run at a time — cancel it first`,
    );
  }
  const { actor, role } = actorOf(principal);
  let lost: (why: string) => void = () => undefined;
  const lease = await runLease(`scenario ${scenario.number} (${scenario.title}) is running, started by ${actor},`, (why) => lost(why));
  if (s.current?.active) {
    // Another request of this console started one while the lease was being taken.
    await lease.release();
    throw conflict(`scenario ${s.current.view().number} is running on this console; only one run at a time — cancel it first`);
  }
  // The run's node actions are audited as this user's, done by this scenario and run (the run id
  // is the run's own: known once it is built, before its first action).
  const via = { scenario: scenario.number, scenarioId: scenario.id, runId: '' };
  const run = newRun(lease, {
    scenario,
    seed,
    speed: speed ?? 1,
    readingMs: runtime.scenarioReadingMs,
    // The sandbox's channel only: runtime.control (the main masters) is never handed to a run.
    control: auditedControl(control, { actor, role }, () => via),
    main,
    where: whereSentence(nodes, runtime),
    basePrefix: runtime.keyPrefix,
    startedBy: actor,
    // No `node`: that number would name a main master on every screen that shows events.
    onNodeAction: (node, label) =>
      publishEvent({
        type: 'node.action',
        detail: `teaching sandbox node ${node}, scenario ${scenario.number}: ${label}`,
        source: 'service',
      }),
  });
  via.runId = run.runId;
  lost = (why) => run.cancel(`cancelled: ${why}`);
  s.releasing = run.finished.then(
    () => lease.release(),
    () => lease.release(),
  );
  s.current = run;
  void recordAudit({
    actor,
    role,
    action: 'scenario.run',
    target: `scenario ${scenario.number} (${scenario.id})`,
    outcome: 'ok',
    detail: JSON.stringify({ runId: run.runId, seed, speed: speed ?? 1, prefix: run.prefix, ...(restartOf ? { restartOf } : {}) }),
  });
  return run;
}

/** A run that could not be built gives its lease back at once. */
function newRun(lease: HeldLease, options: ConstructorParameters<typeof ScenarioRun>[0]): ScenarioRun {
  try {
    return new ScenarioRun(options);
  } catch (err) {
    void lease.release();
    throw err;
  }
}

/** Start a run of scenario `id` (one at a time; sandbox only). Audited. */
export async function startRun(principal: Principal, id: string, body: StartRunBody): Promise<RunResponse> {
  const run = await begin(principal, id, body.seed ?? randomSeed(), body.speed, null);
  return { run: run.view() };
}

/** The current (or last) run with its timeline, or null. */
export function currentRun(): RunResponse {
  return { run: state().current?.view() ?? null };
}

/** play | pause | step | cancel | predict | speed | restart on the current run. */
export async function runAction(principal: Principal, action: RunAction, body: RunActionBody): Promise<RunResponse> {
  const run = state().current;
  if (!run) throw notFound('no scenario has run yet');
  if (action === 'restart') {
    const v = run.view();
    if (run.active) {
      run.cancel('restarted by the viewer');
      await run.finished;
    }
    const next = await begin(principal, v.scenarioId, v.seed, v.speed, v.runId);
    return { run: next.view() };
  }
  if (!run.active) throw conflict('this run has ended; start a new one');
  switch (action) {
    case 'play':
      run.play();
      break;
    case 'pause':
      run.pause();
      break;
    case 'step':
      run.step();
      break;
    case 'cancel':
      run.cancel();
      break;
    case 'speed':
      if (body.speed === undefined) throw badRequest('body: speed is required (0.5, 1 or 2)');
      run.setSpeed(body.speed);
      break;
    case 'predict': {
      if (body.choice === undefined) throw badRequest('body: choice is required (a choice id, or null to skip)');
      if (!run.predict(body.choice)) {
        throw run.view().pendingPrediction === null
          ? conflict('no prediction is waiting for an answer')
          : badRequest(`"${body.choice}" is not one of the choices`);
      }
      break;
    }
    default:
      return exhaustive(action, 'run action');
  }
  return { run: run.view() };
}
