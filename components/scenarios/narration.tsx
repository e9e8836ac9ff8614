import type { Prediction, RunAction, RunView } from '@/lib/api/scenarios';
import { beatView } from './beat';
import { Glossed } from './glossary';
import type { Act } from './run-control';
import styles from './scenarios.module.css';

/**
 * What the run says now (read aloud as it changes): the prediction asked, or the step and its
 * beat; what happened to the last prediction; the run's failure.
 */
export function Narration({ run, canOperate, busy, act }: { run: RunView; canOperate: boolean; busy: RunAction | null; act: Act }) {
  const pending = run.predictions.find((p) => p.id === run.pendingPrediction) ?? null;
  const revealed = [...run.predictions].reverse().find((p) => p.actual !== null) ?? null;
  return (
    <section className={styles.narration} aria-live="polite" data-testid="narration">
      {pending ? <PredictPrompt prediction={pending} canOperate={canOperate} busy={busy} act={act} /> : <BeatNarration run={run} />}
      {revealed && !pending && <Reveal prediction={revealed} />}
      {run.error && (
        <div className="callout callout-bad" role="alert">
          The run failed: {run.error}
        </div>
      )}
    </section>
  );
}

/** The question asked before the step that answers it: a button per choice, and Skip. */
function PredictPrompt({
  prediction: pending,
  canOperate,
  busy,
  act,
}: {
  prediction: Prediction;
  canOperate: boolean;
  busy: RunAction | null;
  act: Act;
}) {
  return (
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
  );
}

/** The step under way and its beat: the step that opened it and the steps chained to it, each with its narration. */
function BeatNarration({ run }: { run: RunView }) {
  const step = run.steps[run.stepIndex];
  const beat = beatView(run.steps, run.stepIndex);
  return (
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
  );
}

/** What happened to the last prediction once its step ran: right, wrong, or (skipped) just what happened. */
function Reveal({ prediction: revealed }: { prediction: Prediction }) {
  return (
    <div
      className={`${styles.reveal} ${revealed.skipped ? '' : revealed.answer === revealed.actual ? styles.revealRight : styles.revealWrong}`}
      data-testid="reveal"
      data-prediction={revealed.id}
    >
      <strong>
        {revealed.skipped ? 'What happened: ' : revealed.answer === revealed.actual ? 'You called it: ' : 'Not quite — what happened: '}
        {revealed.choices.find((c) => c.id === revealed.actual)?.label}
      </strong>
      {revealed.explanation && (
        <span>
          {' '}
          <Glossed text={revealed.explanation} />
        </span>
      )}
    </div>
  );
}
