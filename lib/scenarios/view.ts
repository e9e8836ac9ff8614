import { quorumSize, semaphoreSlotName } from '@redlock-console/redlock';
import type { RunStatus, RunView, Speed } from '../api/scenarios';
import type { NodeAddress } from './clients';
import type { RunRecord } from './record';
import type { ClientSpec, ScenarioDefinition, ScenarioScript } from './script';

export interface ViewSource {
  scenario: ScenarioDefinition;
  seed: number;
  startedBy: string;
  runId: string;
  prefix: string;
  script: ScenarioScript;
  record: RunRecord;
  status: RunStatus;
  mode: 'play' | 'paused';
  speed: Speed;
  startedAt: number;
  finishedAt: number | null;
  stepIndex: number;
  pendingPrediction: string | null;
  nodes: readonly NodeAddress[];
  where: string | null;
  restore: RunView['restore'];
  error: string | null;
}

/**
 * A client as the run view shows it: `unsafe` when it runs with a safety check of the lock core
 * switched off, and which one (the quarantine as a whole, or only the node checks that detect a
 * restarted redis-server, data gone back in time, a clock jump).
 */
export function clientView(spec: ClientSpec): RunView['clients'][number] {
  const unsafeSetting = spec.quarantine === false ? 'quarantine off' : spec.nodeChecks === false ? 'node checks off' : null;
  return { name: spec.name, description: spec.description, unsafe: unsafeSetting !== null, unsafeSetting };
}

/** The run as the API shows it, as of run time `now`. */
export function buildView(src: ViewSource, now: number): RunView {
  const { scenario, script, record } = src;
  record.settle(now);
  return {
    runId: src.runId,
    scenarioId: scenario.id,
    number: scenario.number,
    title: scenario.title,
    lesson: scenario.lesson,
    seed: src.seed,
    speed: src.speed,
    prefix: src.prefix,
    status: src.status,
    mode: src.mode,
    startedBy: src.startedBy,
    startedAt: src.startedAt,
    finishedAt: src.finishedAt,
    stepIndex: src.stepIndex,
    steps: record.steps,
    predictions: record.predictions,
    pendingPrediction: src.pendingPrediction,
    clients: script.clients.map(clientView),
    nodes: src.nodes.map((a) => ({ id: a.id, label: a.label })),
    where: src.where,
    resources: script.resources.map((r) =>
      r.limit === undefined ? { ...r } : { ...r, slots: Array.from({ length: r.limit }, (_, i) => semaphoreSlotName(r.name, i)) },
    ),
    quorum: quorumSize(src.nodes.length),
    ttlMs: script.ttlMs,
    maxTtlMs: script.maxTtlMs,
    timeline: record.timeline(now),
    checker: record.checker(now),
    stores: {
      unfenced: { value: record.plain.value, highest: null, accepted: record.plain.accepted, rejected: 0 },
      fenced: {
        value: record.fenced.value,
        highest: record.fenced.highest,
        accepted: record.fenced.accepted,
        rejected: record.fenced.rejected,
      },
    },
    facts: record.facts,
    log: record.log,
    simulated: [...script.simulated],
    restore: src.restore,
    error: src.error,
  };
}
