import { randomBytes } from 'node:crypto';
import { lockKey, type Lock } from '@redlock-console/redlock';
import type { RunStatus, RunView, Speed, StepView } from '../api/scenarios';
import { ScenarioClient } from './clients';
import { ScenarioCluster, type ClusterControl } from './cluster';
import type { StepContext } from './context';
import { RunFlow } from './flow';
import { createPrng } from './prng';
import { RunRecord } from './record';
import { Sampler } from './sampler';
import { buildView } from './view';
import { limitsOf, type ScenarioDefinition, type ScenarioScript, type Step } from './script';
import type { MainMasters } from './separation';
import { runStep } from './steps';

export interface RunOptions {
  scenario: ScenarioDefinition;
  seed: number;
  speed: Speed;
  /** The pause between two steps at 1× (REDLOCK_SCENARIO_READING_MS). @default READING_MS */
  readingMs?: number;
  control: ClusterControl;
  /** The cluster's key prefix; the run uses `<basePrefix>demo:<runId>:` under it. */
  basePrefix: string;
  startedBy: string;
  /** Told of every node action the run takes (the console publishes them as live events). */
  onNodeAction?: (node: number, label: string) => void;
  /**
   * The masters that hold applications' locks: the run refuses to start (before its first command)
   * when `control`'s nodes include one of them (separation.ts).
   */
  main?: MainMasters;
  /** Where the run runs, in a sentence for its first step (the teaching sandbox, its addresses). */
  where?: string;
}

/** A run nobody watches while it waits (paused or for a prediction) is cancelled after this. */
const ABANDON_MS = 120_000;
const MAX_RUN_MS = 5 * 60_000;

/**
 * One scenario run: executes the script step by step against the sandbox cluster, samples every
 * node, answers play/pause/step/predict/cancel, and always puts the cluster back the way it found
 * it (in `finally`, on success, failure and cancel alike).
 */
export class ScenarioRun {
  readonly runId = randomBytes(6).toString('hex');
  readonly prefix: string;
  readonly script: ScenarioScript;
  readonly finished: Promise<void>;
  status: RunStatus = 'running';
  private readonly t0 = performance.now();
  private readonly startedAt = Date.now();
  private finishedAt: number | null = null;
  private frozenAt: number | null = null;
  private stepIndex = 0;
  private pendingPrediction: string | null = null;
  private readonly flow: RunFlow;
  private readonly record: RunRecord;
  private readonly clients = new Map<string, ScenarioClient>();
  private cluster: ScenarioCluster | null = null;
  private sampler: Sampler | null = null;
  private restore: RunView['restore'] = null;
  private error: string | null = null;
  private lastSeen = Date.now();
  private maxLatencyMs = 0;
  private readonly locks = new Map<string, Lock>();
  private readonly background = new Map<string, Promise<unknown>>();
  private readonly marks = new Map<string, number>();
  private readonly inFlight: StepContext['inFlight'] = new Map();

  constructor(private readonly options: RunOptions) {
    this.flow = new RunFlow(options.speed, options.readingMs);
    this.prefix = `${options.basePrefix}demo:${this.runId}:`;
    const built = options.scenario.build(createPrng(options.seed));
    // The first step says where the run runs, before anything else it says.
    const [first, ...rest] = built.steps;
    this.script = options.where && first ? { ...built, steps: [{ ...first, say: `${options.where} ${first.say}` }, ...rest] } : built;
    const steps: StepView[] = this.script.steps.map((s, index) => ({
      index,
      id: s.id,
      kind: s.do,
      title: s.title,
      say: s.say,
      chained: !!s.chain,
      status: 'pending',
      startedAt: null,
      endedAt: null,
      result: null,
    }));
    this.record = new RunRecord(
      steps,
      this.script.resources.map((r) => r.name),
      limitsOf(this.script),
    );
    this.record.pausedAt = (client, at) => this.clients.get(client)?.pausedAt(at) ?? false;
    this.finished = this.run();
  }

  get scenarioId(): RunView['scenarioId'] {
    return this.options.scenario.id;
  }

  get active(): boolean {
    return this.finishedAt === null;
  }

  now = (): number => Math.round(performance.now() - this.t0);

  // ---- controls -------------------------------------------------------------------------------

  get mode(): 'play' | 'paused' {
    return this.flow.mode;
  }

  get speed(): Speed {
    return this.flow.speed;
  }

  play(): void {
    this.flow.play();
  }

  pause(): void {
    this.flow.pause();
  }

  /** Paused: run the next step (and the steps chained to it). Playing: pause after the current one. */
  step(): void {
    this.flow.step();
  }

  setSpeed(speed: Speed): void {
    this.flow.setSpeed(speed);
  }

  /** Answer the waiting prediction (null: skip). Returns false when none waits or the choice is unknown. */
  predict(choice: string | null): boolean {
    const p = this.record.predictions.find((x) => x.id === this.pendingPrediction);
    if (!p) return false;
    if (choice !== null && !p.choices.some((c) => c.id === choice)) return false;
    p.answer = choice;
    p.skipped = choice === null;
    p.answeredAt = this.now();
    this.pendingPrediction = null;
    this.status = 'running';
    this.flow.changed();
    return true;
  }

  cancel(reason = 'cancelled by the viewer'): void {
    if (this.flow.signal.aborted || !this.active) return;
    this.record.say(this.now(), reason, 'warn');
    this.flow.cancel(reason);
  }

  // ---- the run --------------------------------------------------------------------------------

  private async run(): Promise<void> {
    const watchdog = setInterval(() => this.watch(), 5_000);
    let sampler: Sampler | null = null;
    try {
      this.cluster = await ScenarioCluster.open(this.options.control, this.options.main);
      if (this.cluster.size !== 5) throw new Error(`scenarios are written for 5 masters; this cluster has ${this.cluster.size}`);
      for (const spec of this.script.clients) {
        this.clients.set(
          spec.name,
          new ScenarioClient(spec, this.cluster.addresses, { keyPrefix: this.prefix, maxTtlMs: this.script.maxTtlMs }),
        );
      }
      sampler = new Sampler(this.cluster, this.record, this.prefix, this.script.resources, this.now);
      this.sampler = sampler;
      sampler.start();
      await sampler.refreshStates();
      const steps = this.script.steps;
      for (let i = 0; i < steps.length; i++) {
        const step = steps[i]!;
        if (!step.chain) {
          await this.flow.boundary(i === 0, () => {
            this.status = 'paused';
          });
          this.status = 'running';
        }
        this.stepIndex = i;
        const view = this.record.steps[i]!;
        view.status = 'active';
        view.startedAt = this.now();
        if (step.do === 'predict') {
          await this.ask(step);
          view.result = this.predictionLine(step.id);
        } else {
          this.record.say(this.now(), step.say, 'muted');
          view.result = await runStep(this.context(), step);
        }
        view.status = 'done';
        view.endedAt = this.now();
      }
      this.status = 'done';
    } catch (err) {
      const aborted = this.flow.signal.aborted;
      const step = this.record.steps[this.stepIndex];
      if (step && step.status === 'active') {
        step.status = aborted ? 'skipped' : 'failed';
        step.endedAt = this.now();
        step.result = aborted ? 'cancelled' : (err as Error).message;
      }
      this.status = aborted ? 'cancelled' : 'failed';
      if (!aborted) {
        this.error = (err as Error).message ?? String(err);
        this.record.say(this.now(), `the run failed: ${this.error}`, 'bad');
      }
    } finally {
      const finalStatus = this.status;
      // 'restoring' before the first await: nobody may read 'cancelled'/'done' (and look for leftover
      // keys) while the cluster is still being put back.
      this.status = 'restoring';
      await sampler?.stop();
      this.frozenAt = this.now();
      this.endOpenBeliefs();
      this.pendingPrediction = null;
      await this.cleanUp();
      clearInterval(watchdog);
      this.status = this.restore?.error ? 'failed' : finalStatus;
      this.finishedAt = Date.now();
      this.flow.changed();
    }
  }

  private context(): StepContext {
    return {
      now: this.now,
      signal: this.flow.signal,
      record: this.record,
      cluster: this.cluster!,
      client: (name) => {
        const c = this.clients.get(name);
        if (!c) throw new Error(`the script names an unknown client ${name}`);
        return c;
      },
      clients: this.clients,
      prefix: this.prefix,
      maxTtlMs: this.script.maxTtlMs,
      lockKey: (r) => lockKey(this.prefix, r),
      limitOf: (r) => this.script.resources.find((x) => x.name === r)?.limit,
      sleep: (ms) => this.flow.sleep(ms),
      sleepScaled: (ms) => this.flow.sleep(ms / this.flow.speed),
      background: this.background,
      locks: this.locks,
      marks: this.marks,
      inFlight: this.inFlight,
      reveal: (id, actual, explanation) => this.reveal(id, actual, explanation),
      refreshStates: async () => this.sampler?.refreshStates(),
      sampleNow: async () => this.sampler?.sampleAll(),
      nodeAction: (node, label) => {
        try {
          this.options.onNodeAction?.(node, label);
        } catch {
          // a listener's problem is not the run's
        }
      },
      noteLatency: (ms) => {
        this.maxLatencyMs = Math.max(this.maxLatencyMs, ms);
      },
    };
  }

  private async ask(step: Extract<Step, { do: 'predict' }>): Promise<void> {
    this.record.predictions.push({
      id: step.id,
      question: step.question,
      choices: step.choices.map((c) => ({ ...c })),
      answer: null,
      skipped: false,
      answeredAt: null,
      actual: null,
      explanation: null,
    });
    this.pendingPrediction = step.id;
    this.status = 'predict';
    const p = this.record.predictions[this.record.predictions.length - 1]!;
    while (p.answeredAt === null) {
      await this.flow.nextChange();
      this.flow.throwIfAborted();
    }
    this.pendingPrediction = null;
    this.status = 'running';
  }

  private reveal(id: string, actual: string, explanation: string | undefined): void {
    const p = this.record.predictions.find((x) => x.id === id);
    if (!p) return;
    p.actual = actual;
    p.explanation = explanation ?? null;
    const label = (choice: string | null) => p.choices.find((c) => c.id === choice)?.label ?? choice ?? '';
    const verdict = p.skipped ? 'You skipped this one.' : p.answer === actual ? 'You called it.' : `You predicted "${label(p.answer)}".`;
    this.record.say(this.now(), `${verdict} What happened: ${label(actual)}.`, p.skipped || p.answer === actual ? 'ok' : 'warn');
  }

  private predictionLine(id: string): string {
    const p = this.record.predictions.find((x) => x.id === id);
    if (!p || p.skipped) return 'skipped';
    return `answered: ${p.choices.find((c) => c.id === p.answer)?.label ?? p.answer}`;
  }

  private endOpenBeliefs(): void {
    const t = this.frozenAt ?? this.now();
    this.record.settle(t);
    for (const b of this.record.beliefs) {
      if (b.to !== null) continue;
      b.to = b.stale ? t : Math.min(t, b.validUntil);
      b.ended = 'abandoned';
    }
  }

  /** Close the clients, restore the nodes, delete the run's keys. Never throws. */
  private async cleanUp(): Promise<void> {
    this.restore = { done: false, actions: [], keysDeleted: 0, error: null };
    this.flow.cancel('the run ended');
    await Promise.race([Promise.allSettled([...this.background.values()]), new Promise((r) => setTimeout(r, 3_000))]);
    await Promise.all([...this.clients.values()].map((c) => c.close()));
    const cluster = this.cluster;
    if (!cluster) {
      this.restore.done = true;
      return;
    }
    const outcome = await cluster.restoreAndClean(this.prefix, this.maxLatencyMs);
    this.restore = { done: outcome.error === null, ...outcome };
    if (outcome.error) this.record.say(this.now(), `restoring the cluster failed: ${outcome.error}`, 'bad');
  }

  private watch(): void {
    const waiting = this.status === 'paused' || this.status === 'predict';
    if (waiting && Date.now() - this.lastSeen > ABANDON_MS) this.cancel('nobody has watched this run for 2 minutes: cancelled');
    if (Date.now() - this.startedAt > MAX_RUN_MS) this.cancel('the run took more than 5 minutes: cancelled');
  }

  // ---- the view -------------------------------------------------------------------------------

  view(): RunView {
    this.lastSeen = Date.now();
    return buildView(
      {
        scenario: this.options.scenario,
        seed: this.options.seed,
        startedBy: this.options.startedBy,
        runId: this.runId,
        prefix: this.prefix,
        script: this.script,
        record: this.record,
        status: this.status,
        mode: this.mode,
        speed: this.speed,
        startedAt: this.startedAt,
        finishedAt: this.finishedAt,
        stepIndex: this.stepIndex,
        pendingPrediction: this.pendingPrediction,
        nodes: this.cluster?.addresses ?? [],
        where: this.options.where ?? null,
        restore: this.restore,
        error: this.error,
      },
      this.frozenAt ?? this.now(),
    );
  }
}
