import { useId, type ReactNode } from 'react';
import styles from './charts.module.css';

export type LoadingState = 'loading' | 'ready' | 'empty' | 'error';

/**
 * One chart's frame: title, subtitle and latest figure, the legend, a note, and the plot, or in its
 * place a skeleton (loading), what an empty window means (empty) or why the history could not be read.
 */
export function ChartCard({
  testId,
  state,
  title,
  subtitle,
  stat,
  legend,
  empty,
  errorText,
  note,
  knowledge,
  children,
}: {
  testId: string;
  state: LoadingState;
  /** Whether the chart's window was read in full ('known'), in part or not at all (said as data-knowledge). */
  knowledge?: 'known' | 'partial' | 'unknown';
  title: string;
  subtitle: string;
  stat: { value: string; label: string } | null;
  legend: Array<{ label: string; color: string; box?: boolean }>;
  empty: { title: string; hint: string };
  errorText: string | null;
  /** What the chart cannot see, said under its legend (e.g. nodes without keyspace notifications). */
  note?: string;
  children: ReactNode;
}) {
  const titleId = useId();
  return (
    <figure
      className={styles.card}
      data-testid={testId}
      data-loading-state={state}
      data-knowledge={knowledge}
      aria-labelledby={titleId}
      aria-busy={state === 'loading'}
    >
      <div className={styles.head}>
        <div>
          <h3 className={styles.title} id={titleId}>
            {title}
          </h3>
          <p className={styles.subtitle}>{subtitle}</p>
        </div>
        {stat && state === 'ready' ? (
          <div className={styles.stat}>
            <span className={styles.statValue}>{stat.value}</span>
            <span className={styles.statLabel}>{stat.label}</span>
          </div>
        ) : null}
      </div>
      <ul className={styles.legend} aria-label="Legend">
        {legend.map((l) => (
          <li key={l.label}>
            <span className={l.box ? styles.legendSwatchBox : styles.legendSwatch} style={{ background: l.color }} />
            {l.label}
          </li>
        ))}
      </ul>
      {note ? (
        <p className={styles.subtitle} data-testid={`${testId}-note`} role="note">
          {note}
        </p>
      ) : null}
      <div className={styles.plot}>
        {state === 'ready' ? children : null}
        {state === 'loading' ? <div className={styles.skeleton} aria-label="Loading" /> : null}
        {state === 'empty' ? (
          <div className={styles.overlay}>
            <div>
              <strong>{empty.title}</strong>
              {empty.hint}
            </div>
          </div>
        ) : null}
        {state === 'error' ? (
          <div className={`${styles.overlay} ${styles.overlayError}`} role="alert">
            <div>
              <strong>Could not read the history</strong>
              {errorText}
            </div>
          </div>
        ) : null}
      </div>
    </figure>
  );
}
