import { queryOptions } from '@tanstack/react-query';
import {
  ACTIVE_STATUSES,
  runResponseSchema,
  scenarioListSchema,
  type RunAction,
  type RunActionBody,
  type RunResponse,
  type ScenarioId,
  type Speed,
} from '../api/scenarios';
import { fetchJson } from './fetch-json';
import { queryKeys } from './queries';
import { postJson } from './session';

export const scenarioKeys = queryKeys.scenarios;

/** Poll interval of a run that is still going (the timeline samples nodes every ~120 ms). */
export const RUN_POLL_MS = 250;

export const scenarioListQuery = () =>
  queryOptions({
    queryKey: scenarioKeys.list,
    queryFn: ({ signal }) => fetchJson('/api/scenarios', scenarioListSchema, { signal }),
    refetchInterval: 5_000,
  });

/** The current run with its timeline: polled every 250 ms while it runs, then left alone. */
export const currentRunQuery = () =>
  queryOptions({
    queryKey: scenarioKeys.current,
    queryFn: ({ signal }) => fetchJson('/api/scenarios/runs/current', runResponseSchema, { signal }),
    refetchInterval: (query) => {
      const run = query.state.data?.run;
      return run && ACTIVE_STATUSES.includes(run.status) ? RUN_POLL_MS : 3_000;
    },
    refetchIntervalInBackground: false,
  });

export function startScenarioRun(id: ScenarioId, options: { seed?: number; speed?: Speed }): Promise<RunResponse> {
  return postJson(`/api/scenarios/${encodeURIComponent(id)}/runs`, options, runResponseSchema);
}

export function runControl(action: RunAction, body: RunActionBody = {}): Promise<RunResponse> {
  return postJson(`/api/scenarios/runs/current/${action}`, body, runResponseSchema);
}
