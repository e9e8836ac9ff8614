import type { ScenarioDefinition } from '../script';
import { clientPauseScenario } from './client-pause';
import { clockDriftScenario } from './clock-drift';
import { delayedRestartScenario } from './delayed-restart';
import { delayedWriteScenario } from './delayed-write';
import { efficiencyVsCorrectnessScenario } from './efficiency-vs-correctness';
import { minorityFailureScenario } from './minority-failure';
import { quorumScenario } from './quorum';
import { restartFromSnapshotScenario } from './restart-from-snapshot';
import { restartWithoutPersistenceScenario } from './restart-without-persistence';
import { restoredFromBackupScenario } from './restored-from-backup';
import { semaphoreRestartScenario } from './semaphore-restart';
import { slowNetworkScenario } from './slow-network';
import { splitVoteScenario } from './split-vote';

/** The thirteen teaching scenarios, in order. */
export const SCENARIOS: readonly ScenarioDefinition[] = Object.freeze([
  quorumScenario,
  minorityFailureScenario,
  restartWithoutPersistenceScenario,
  delayedRestartScenario,
  clientPauseScenario,
  splitVoteScenario,
  slowNetworkScenario,
  clockDriftScenario,
  restartFromSnapshotScenario,
  delayedWriteScenario,
  efficiencyVsCorrectnessScenario,
  restoredFromBackupScenario,
  semaphoreRestartScenario,
]);

export function scenarioById(id: string): ScenarioDefinition | undefined {
  return SCENARIOS.find((s) => s.id === id);
}
