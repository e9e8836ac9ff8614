'use client';

import type { RunView } from '@/lib/api/scenarios';
import { isTieReason } from '@/lib/scenarios/registers';
import { Glossed } from './glossary';
import { clientColor } from './palette';
import { fmtSeconds } from './format';
import styles from './scenarios.module.css';

function Client({ name }: { name: string }) {
  return (
    <span className={styles.clientChip} style={{ background: clientColor(name) }}>
      {name}
    </span>
  );
}

type CheckedResource = RunView['checker']['resources'][number];

/** 'at most one holder', 'at most 2 holders (2 permits)'; when broken, how many held at once. */
function holdersText(r: CheckedResource): string {
  const limit = r.limit ?? 1;
  if (limit === 1) return r.ok ? 'at most one holder' : 'two holders';
  const most = Math.max(...r.overlaps.map((o) => o.clients.length));
  return r.ok ? `at most ${limit} holders (${limit} permits)` : `${most} holders of ${limit} permits`;
}

function overlapWhy(o: CheckedResource['overlaps'][number], limit: number): string {
  if (limit === 1)
    return o.bothValid
      ? "Both were inside their validity: the protocol's own guarantee broke."
      : 'One of them was past its validity (it could not tell): only fencing protects the data.';
  return o.bothValid
    ? `More than ${limit} were inside their validity at once: the protocol's own guarantee broke.`
    : `Some were past their validity (they could not tell): at most ${limit} were within it.`;
}

/** The mutual-exclusion checker: over what clients believe, per resource (a semaphore: against its permits). */
export function CheckerPanel({ run }: { run: RunView }) {
  const { checker } = run;
  const violations = checker.resources.reduce((n, r) => n + r.overlaps.length, 0);
  // A semaphore among the resources: the checker counts holders against its permits.
  const permits = checker.resources.some((r) => (r.limit ?? 1) > 1);
  return (
    <section
      className={`${styles.panel} ${checker.ok ? styles.checkerOk : styles.checkerBad}`}
      data-testid="checker"
      data-state={checker.ok ? 'ok' : 'violation'}
      aria-labelledby="checker-title"
    >
      <div className={styles.panelHead}>
        <h2 id="checker-title">Mutual-exclusion checker</h2>
        <span className={checker.ok ? styles.pillOk : styles.pillBad}>
          {checker.ok ? 'holds' : `${violations} overlap${violations === 1 ? '' : 's'}`}
        </span>
      </div>
      <p className={styles.verdict}>
        {checker.ok
          ? permits
            ? 'No resource has had more holders at once than it allows (one for a lock, its permits for a semaphore).'
            : 'No two clients have believed they hold the same resource at the same time.'
          : permits
            ? 'More clients believed they held a resource at once than it allows.'
            : 'Two clients believed they held the same resource at the same time.'}
      </p>
      <ul className={styles.checkList}>
        {checker.resources.map((r) => (
          <li
            key={r.resource}
            data-testid={`checker-resource-${r.resource}`}
            data-state={r.ok ? 'ok' : 'violation'}
            data-overlaps={r.overlaps.length}
          >
            <div className={styles.checkRow}>
              <span className={r.ok ? styles.dotOk : styles.dotBad} aria-hidden="true" />
              <code className={styles.resourceName}>{r.resource}</code>
              <span className="muted small">{holdersText(r)}</span>
            </div>
            {r.overlaps.map((o) => (
              <div
                key={o.from}
                className={styles.overlapLine}
                data-testid="overlap"
                data-both-valid={o.bothValid}
                data-clients={o.clients.join(' ')}
              >
                {o.clients.map((c, i) => (
                  <span key={c}>
                    {i > 0 && ' + '}
                    <Client name={c} />
                  </span>
                ))}{' '}
                from {fmtSeconds(o.from)} to {fmtSeconds(o.to)}
                <strong> ({fmtSeconds(o.to - o.from)})</strong>
                <div className={styles.overlapWhy}>{overlapWhy(o, r.limit ?? 1)}</div>
              </div>
            ))}
          </li>
        ))}
      </ul>
    </section>
  );
}

/** The plain and the fenced store, and every write the clients made. */
export function StoresPanel({ run }: { run: RunView }) {
  const { stores } = run;
  const writes = run.timeline.writes;
  const ties = writes.filter((w) => w.fenced === 'rejected' && isTieReason(w.reason));
  return (
    <section className={styles.panel} data-testid="stores" aria-labelledby="stores-title">
      <div className={styles.panelHead}>
        <h2 id="stores-title">Storage behind the lock</h2>
        <span className="muted small">
          {writes.length} write{writes.length === 1 ? '' : 's'}
        </span>
      </div>
      <div className={styles.storeGrid}>
        <div className={styles.store} data-testid="store-unfenced">
          <span className={styles.storeLabel}>Plain store</span>
          <span className={styles.storeValue}>{stores.unfenced.value ?? '—'}</span>
          <span className="muted small">accepts every write</span>
        </div>
        <div className={styles.store} data-testid="store-fenced">
          <span className={styles.storeLabel}>Fenced store</span>
          <span className={styles.storeValue}>{stores.fenced.value ?? '—'}</span>
          <span className="muted small">
            needs a fence above {stores.fenced.highest === null ? 'the highest seen' : stores.fenced.highest}, or equal to it from the same
            holder
          </span>
        </div>
      </div>
      {ties.length > 0 && (
        <p className="callout callout-bad" data-testid="fence-tie">
          Fence tie:{' '}
          {ties.map((w) => `${w.client} wrote with fence ${w.fence ?? 'none'}, which another holder had already used`).join('; ')}. Two
          holders were handed the same number, so the fence no longer names one holder: the fenced store refused the second writer, but
          fencing itself failed here.
        </p>
      )}
      {writes.length === 0 ? (
        <p className="muted small">No client writes in this scenario.</p>
      ) : (
        <table className={styles.writes}>
          <thead>
            <tr>
              <th>time</th>
              <th>client</th>
              <th>value</th>
              <th>fence</th>
              <th>plain</th>
              <th>fenced</th>
            </tr>
          </thead>
          <tbody>
            {writes.map((w, i) => (
              <tr
                key={i}
                data-testid={`write-${i}`}
                data-client={w.client}
                data-unfenced={w.unfenced}
                data-fenced={w.fenced}
                data-tie={w.fenced === 'rejected' && isTieReason(w.reason)}
              >
                <td className={styles.num} data-label="time">
                  {fmtSeconds(w.t)}
                </td>
                <td data-label="client">
                  <Client name={w.client} />
                </td>
                <td data-label="value">{w.value}</td>
                <td className={`${styles.num} ${styles.fenceWhole}`} data-label="fence">
                  {w.fence ?? 'none'}
                </td>
                <td data-label="plain">
                  <span className={styles.pillOk}>accepted</span>
                </td>
                <td data-label="fenced">
                  <span className={w.fenced === 'accepted' ? styles.pillOk : styles.pillBad} title={w.reason}>
                    {w.fenced === 'rejected' && isTieReason(w.reason) ? 'rejected: tie' : w.fenced}
                  </span>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

/** Steps of the script with their status and what each did. */
export function StepsPanel({ run }: { run: RunView }) {
  return (
    <section className={styles.panel} aria-labelledby="steps-title">
      <div className={styles.panelHead}>
        <h2 id="steps-title">Script</h2>
        <span className="muted small">
          {run.steps.filter((s) => s.status === 'done').length} / {run.steps.length} steps
        </span>
      </div>
      {/* Scrolls when long: focusable so a keyboard can scroll it too. */}
      <ol className={styles.steps} data-testid="steps" tabIndex={0} aria-label="Steps of the script">
        {run.steps.map((s) => (
          <li key={s.id} className={styles[`step-${s.status}`]} data-testid={`step-${s.id}`} data-status={s.status} title={s.say}>
            <span className={styles.stepTitle}>
              {s.chained ? '↳ ' : ''}
              {s.title}
            </span>
            {s.result && (
              <span className={styles.stepResult}>
                <Glossed text={s.result} />
              </span>
            )}
          </li>
        ))}
      </ol>
    </section>
  );
}

/** Measured facts, predictions and the lesson, once the run is over (facts appear as they are measured). */
export function ResultPanel({ run }: { run: RunView }) {
  const answered = run.predictions.filter((p) => p.actual !== null && !p.skipped);
  const right = answered.filter((p) => p.answer === p.actual).length;
  return (
    <section className={styles.panel} data-testid="result" aria-labelledby="result-title">
      <div className={styles.panelHead}>
        <h2 id="result-title">What this run showed</h2>
        {answered.length > 0 && (
          <span className="muted small">
            predictions: {right} of {answered.length} right
          </span>
        )}
      </div>
      <p className={styles.lesson}>
        <Glossed text={run.lesson} />
      </p>
      {run.facts.length > 0 && (
        <dl className={styles.facts}>
          {run.facts.map((f) => (
            <div key={f.id} data-testid={`fact-${f.id}`} data-value={f.value}>
              <dt>{f.label}</dt>
              <dd>{f.value}</dd>
            </div>
          ))}
        </dl>
      )}
      {run.predictions.length > 0 && (
        <ul className={styles.predictions}>
          {run.predictions.map((p) => {
            const label = (id: string | null) => p.choices.find((c) => c.id === id)?.label ?? '—';
            const state = p.actual === null ? 'open' : p.skipped ? 'skipped' : p.answer === p.actual ? 'right' : 'wrong';
            return (
              <li key={p.id} data-testid={`prediction-${p.id}`} data-state={state} data-actual={p.actual ?? ''}>
                <span className={styles[`pred-${state}`]}>{state === 'right' ? '✓' : state === 'wrong' ? '✕' : '·'}</span>
                <span>
                  <span className={styles.predQ}>{p.question}</span>
                  <span className="muted small">
                    {p.skipped ? 'skipped' : `you: ${label(p.answer)}`}
                    {p.actual !== null ? ` · happened: ${label(p.actual)}` : ''}
                  </span>
                </span>
              </li>
            );
          })}
        </ul>
      )}
      {run.simulated.length > 0 && (
        <div className={styles.simulated}>
          <strong>Simulated, said plainly:</strong>
          <ul>
            {run.simulated.map((s) => (
              <li key={s}>{s}</li>
            ))}
          </ul>
        </div>
      )}
      {run.restore && (
        <p
          className={styles.restore}
          data-testid="restore-status"
          data-state={run.restore.error ? 'error' : run.restore.done ? 'done' : 'running'}
        >
          {run.restore.error
            ? `Restoring the cluster failed: ${run.restore.error}`
            : run.restore.done
              ? `Cluster restored${run.restore.actions.length ? `: ${run.restore.actions.join('; ')}` : ' (nothing to undo)'} · ${run.restore.keysDeleted} key${run.restore.keysDeleted === 1 ? '' : 's'} of ${run.prefix} deleted.`
              : "Restoring the cluster: healing proxies, restarting nodes, deleting this run's keys…"}
        </p>
      )}
    </section>
  );
}

export function EventLog({ run }: { run: RunView }) {
  const entries = run.log.slice(-60).reverse();
  return (
    <details className={styles.logBox}>
      <summary>
        Event log <span className="muted small">({run.log.length})</span>
      </summary>
      <ol className={styles.log} data-testid="event-log">
        {entries.map((e, i) => (
          <li key={`${e.t}-${i}`} className={styles[`tone-${e.tone}`]}>
            <span className={styles.num}>{fmtSeconds(e.t)}</span>
            <span>{e.text}</span>
          </li>
        ))}
      </ol>
    </details>
  );
}
