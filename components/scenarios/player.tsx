'use client';

import { ACTIVE_STATUSES, type RunView } from '@/lib/api/scenarios';
import { Cast } from './cast';
import { Narration } from './narration';
import { CheckerPanel, EventLog, ResultPanel, StepsPanel, StoresPanel } from './panels';
import { PlayerHead } from './player-head';
import { useRunControl, useRunShortcuts } from './run-control';
import { RunControls } from './run-controls';
import { TimelineCard } from './timeline-card';
import styles from './scenarios.module.css';

/**
 * A run as it plays: its head, the controls (and their keys), the narration beside the cast, the
 * timeline, then the checker, the stores, the result, the steps and the event log.
 */
export function Player({
  run,
  receivedAt,
  canOperate,
  onBack,
}: {
  run: RunView;
  receivedAt: number;
  canOperate: boolean;
  onBack: () => void;
}) {
  const { act, busy, error } = useRunControl();
  const active = ACTIVE_STATUSES.includes(run.status);
  const timelineLive = active && run.status !== 'restoring';
  useRunShortcuts(act, { mode: run.mode, active, canOperate });

  return (
    <div
      className={styles.player}
      data-testid="scenario-player"
      data-status={run.status}
      data-scenario={run.scenarioId}
      data-run={run.runId}
      data-prefix={run.prefix}
    >
      <PlayerHead run={run} onBack={onBack} />
      {run.where && (
        <p className={`callout ${styles.where}`} data-testid="run-where">
          {run.where}
        </p>
      )}
      <RunControls run={run} active={active} canOperate={canOperate} busy={busy} act={act} />
      {error && (
        <div className="callout callout-bad" role="alert">
          {error}
        </div>
      )}

      <div className={styles.stage}>
        <Narration run={run} canOperate={canOperate} busy={busy} act={act} />
        <Cast run={run} />
      </div>

      <TimelineCard run={run} receivedAt={receivedAt} live={timelineLive} />

      <div className={styles.panels}>
        <CheckerPanel run={run} />
        <StoresPanel run={run} />
      </div>
      <div className={styles.panels}>
        <ResultPanel run={run} />
        <StepsPanel run={run} />
      </div>
      <EventLog run={run} />
    </div>
  );
}
