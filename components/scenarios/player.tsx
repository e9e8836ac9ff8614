'use client';

import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { ACTIVE_STATUSES, SPEEDS, type RunAction, type RunActionBody, type RunView, type Speed } from '@/lib/api/scenarios';
import { runControl, scenarioKeys } from '@/lib/client/scenario-queries';
import { clientColor } from './palette';
import { fmtSeconds } from './format';
import { beatView } from './beat';
import { Glossed, GLOSSARY, Term } from './glossary';
import { Icon } from './icon';
import { CheckerPanel, EventLog, ResultPanel, StepsPanel, StoresPanel } from './panels';
import { TimelineCard } from './timeline-card';
import styles from './scenarios.module.css';

const entry = (term: string) => GLOSSARY.find((e) => e.term === term)!;
const TTL_ENTRY = entry('TTL');
const LEASE_CEILING = entry('lease ceiling');
const QUORUM = entry('quorum');

const STATUS_LABEL: Record<RunView['status'], string> = {
  running: 'Running',
  paused: 'Paused',
  predict: 'Your prediction',
  restoring: 'Restoring the cluster',
  done: 'Finished',
  failed: 'Failed',
  cancelled: 'Cancelled',
};

function typing(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  return !!el && (el.tagName === 'INPUT' || el.tagName === 'TEXTAREA' || el.tagName === 'SELECT' || el.isContentEditable);
}

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
  const queryClient = useQueryClient();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState<RunAction | null>(null);
  const active = ACTIVE_STATUSES.includes(run.status);
  const timelineLive = active && run.status !== 'restoring';

  const act = async (action: RunAction, body: RunActionBody = {}) => {
    setBusy(action);
    setError(null);
    try {
      const res = await runControl(action, body);
      queryClient.setQueryData(scenarioKeys.current, res);
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(null);
    }
  };
  const actRef = useRef(act);
  useEffect(() => {
    actRef.current = act;
  });

  // Keyboard: space play/pause, → step, r restart (not after the shell's `g`).
  const modeRef = useRef({ mode: run.mode, active, canOperate });
  useEffect(() => {
    modeRef.current = { mode: run.mode, active, canOperate };
  });
  useEffect(() => {
    let lastG = 0;
    const onKey = (e: KeyboardEvent) => {
      if (e.metaKey || e.ctrlKey || e.altKey || typing(e.target) || document.querySelector('dialog[open]')) return;
      const { mode, active: isActive, canOperate: may } = modeRef.current;
      if (e.key === 'g') {
        lastG = Date.now();
        return;
      }
      if (!may) return;
      if (e.key === ' ' && isActive) {
        e.preventDefault();
        void actRef.current(mode === 'play' ? 'pause' : 'play');
      } else if (e.key === 'ArrowRight' && isActive) {
        e.preventDefault();
        void actRef.current('step');
      } else if (e.key === 'r' && Date.now() - lastG > 1_000) {
        e.preventDefault();
        void actRef.current('restart');
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);

  const step = run.steps[run.stepIndex];
  // A beat: the step that opened it (not chained) and the steps chained to it, so far, each with its narration.
  const beat = beatView(run.steps, run.stepIndex);
  const pending = run.predictions.find((p) => p.id === run.pendingPrediction) ?? null;
  const revealed = [...run.predictions].reverse().find((p) => p.actual !== null) ?? null;

  return (
    <div
      className={styles.player}
      data-testid="scenario-player"
      data-status={run.status}
      data-scenario={run.scenarioId}
      data-run={run.runId}
      data-prefix={run.prefix}
    >
      <div className={styles.playerHead}>
        <div className={styles.playerTitle}>
          <button type="button" className="button button-ghost small" onClick={onBack}>
            ← All scenarios
          </button>
          <h1 className={styles.title}>
            <span className={styles.number}>{run.number}</span>
            {run.title}
          </h1>
          <span className={`${styles.status} ${styles[`status-${run.status}`]}`} data-testid="run-status">
            {STATUS_LABEL[run.status]}
          </span>
        </div>
        <div className={styles.meta}>
          <span>
            seed <code>{run.seed}</code>
          </span>
          <span>
            prefix <code>{run.prefix}</code>
          </span>
          <span>
            <Term entry={TTL_ENTRY}>TTL</Term> {fmtSeconds(run.ttlMs)} · <Term entry={LEASE_CEILING}>lease ceiling</Term>{' '}
            {fmtSeconds(run.maxTtlMs)} · <Term entry={QUORUM}>quorum</Term> {run.quorum} of {run.nodes.length}
          </span>
          <span>started by {run.startedBy}</span>
        </div>
      </div>
      {run.where && (
        <p className={`callout ${styles.where}`} data-testid="run-where">
          {run.where}
        </p>
      )}

      <div className={styles.controlBar} role="toolbar" aria-label="Run controls">
        <button
          type="button"
          className="button button-primary"
          disabled={!canOperate || !active || busy !== null}
          onClick={() => void act(run.mode === 'play' ? 'pause' : 'play')}
          aria-keyshortcuts="Space"
          data-testid="play-pause"
        >
          {run.mode === 'play' && active ? (
            <>
              <Icon name="pause" /> Pause
            </>
          ) : (
            <>
              <Icon name="play" /> Play
            </>
          )}
        </button>
        <button
          type="button"
          className="button"
          disabled={!canOperate || !active || busy !== null}
          onClick={() => void act('step')}
          aria-keyshortcuts="ArrowRight"
        >
          <Icon name="step" /> Step
        </button>
        <button
          type="button"
          className="button"
          disabled={!canOperate || busy !== null}
          onClick={() => void act('restart')}
          aria-keyshortcuts="r"
          data-testid="restart"
        >
          <Icon name="restart" /> Restart
        </button>
        <button
          type="button"
          className="button"
          disabled={!canOperate || !active || run.status === 'restoring' || busy !== null}
          onClick={() => void act('cancel')}
        >
          <Icon name="stop" /> Cancel
        </button>
        <div className={styles.speed} role="group" aria-label="Speed">
          {SPEEDS.map((s: Speed) => (
            <button
              key={s}
              type="button"
              className={`${styles.speedButton} ${run.speed === s ? styles.speedOn : ''}`}
              aria-pressed={run.speed === s}
              disabled={!canOperate || !active}
              onClick={() => void act('speed', { speed: s })}
            >
              {s}×
            </button>
          ))}
        </div>
        <span className={styles.hint}>
          <kbd>Space</kbd> play/pause · <kbd>→</kbd> step · <kbd>r</kbd> restart · speed scales the pauses between steps, never the TTLs
        </span>
      </div>
      {error && (
        <div className="callout callout-bad" role="alert">
          {error}
        </div>
      )}

      <div className={styles.stage}>
        <section className={styles.narration} aria-live="polite" data-testid="narration">
          {pending ? (
            <div className={styles.predict} data-testid="predict-prompt" data-prediction={pending.id}>
              <span className={styles.kicker}>Predict before you see it</span>
              <p className={styles.question}>
                <Glossed text={pending.question} />
              </p>
              <div className={styles.choices}>
                {pending.choices.map((c) => (
                  <button
                    key={c.id}
                    type="button"
                    className={`button ${styles.choice}`}
                    disabled={!canOperate || busy !== null}
                    data-testid={`predict-choice-${c.id}`}
                    onClick={() => void act('predict', { choice: c.id })}
                  >
                    {c.label}
                  </button>
                ))}
                <button
                  type="button"
                  className="button button-ghost"
                  disabled={!canOperate || busy !== null}
                  onClick={() => void act('predict', { choice: null })}
                >
                  Skip
                </button>
              </div>
              {!canOperate && <span className="muted small">An operator answers for this run.</span>}
            </div>
          ) : (
            <>
              <span className={styles.kicker}>
                Step {Math.min(run.stepIndex + 1, run.steps.length)} of {run.steps.length}
                {step ? ` · ${step.title}` : ''}
              </span>
              {beat.opening && (
                <p className={styles.say} data-testid="beat-opening">
                  <Glossed text={beat.opening} />
                </p>
              )}
              {beat.lines.length > 0 && (
                <ol className={styles.beat} data-testid="beat">
                  {beat.lines.map((s) => (
                    <li key={s.id} className={styles[`beat-${s.status}`]} data-testid={`beat-step-${s.id}`} data-status={s.status}>
                      <span className={styles.beatMark} aria-hidden="true">
                        {s.status === 'done' ? '✓' : s.status === 'failed' ? '✕' : s.status === 'active' ? '…' : '·'}
                      </span>
                      <span className={styles.beatTitle}>{s.title}</span>
                      {s.result ? (
                        <span className={styles.result}>
                          <Glossed text={s.result} />
                        </span>
                      ) : (
                        <span />
                      )}
                      {s.say && (
                        <span className={styles.beatSay} data-testid="beat-say">
                          <Glossed text={s.say} />
                        </span>
                      )}
                    </li>
                  ))}
                </ol>
              )}
            </>
          )}
          {revealed && !pending && (
            <div
              className={`${styles.reveal} ${revealed.skipped ? '' : revealed.answer === revealed.actual ? styles.revealRight : styles.revealWrong}`}
              data-testid="reveal"
              data-prediction={revealed.id}
            >
              <strong>
                {revealed.skipped
                  ? 'What happened: '
                  : revealed.answer === revealed.actual
                    ? 'You called it: '
                    : 'Not quite — what happened: '}
                {revealed.choices.find((c) => c.id === revealed.actual)?.label}
              </strong>
              {revealed.explanation && (
                <span>
                  {' '}
                  <Glossed text={revealed.explanation} />
                </span>
              )}
            </div>
          )}
          {run.error && (
            <div className="callout callout-bad" role="alert">
              The run failed: {run.error}
            </div>
          )}
        </section>
        <aside className={styles.cast} aria-label="Clients">
          {run.clients.map((c) => (
            <div key={c.name} className={styles.castRow} data-testid="cast-client" data-client={c.name} data-unsafe={c.unsafe}>
              <span className={styles.clientChip} style={{ background: clientColor(c.name) }}>
                {c.name}
              </span>
              <span className={c.unsafe ? styles.unsafe : undefined} title={c.unsafeSetting ? `unsafe: ${c.unsafeSetting}` : undefined}>
                {c.description}
              </span>
            </div>
          ))}
          {run.resources.length > 1 &&
            run.resources.map((r, i) => (
              <div key={r.name} className={styles.castRow}>
                <span className={styles.resIndex}>{i + 1}</span>
                <code>{r.name}</code>
                <span className="muted small">{r.description}</span>
              </div>
            ))}
        </aside>
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
