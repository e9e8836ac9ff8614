'use client';

import { useRef, useState, type KeyboardEvent, type ReactNode } from 'react';
import styles from './chaos.module.css';

export interface ReportSection {
  id: string;
  title: string;
  /** What the tab says about its table before it is opened ("3 / 3 caught"). */
  count: string;
  note: string;
  body: ReactNode;
}

/**
 * The report's tables as tabs (WAI-ARIA tabs: arrows, Home and End move between them), one table
 * on screen at a time: the page is a screen tall, not three tables stacked five thousand pixels deep.
 */
export function ReportSections({ sections }: { sections: readonly ReportSection[] }) {
  const [current, setCurrent] = useState(sections[0]!.id);
  const tabs = useRef<Array<HTMLButtonElement | null>>([]);
  const index = Math.max(
    0,
    sections.findIndex((s) => s.id === current),
  );
  const onKey = (e: KeyboardEvent) => {
    // From the tab that has the focus (a click may have selected another before).
    const from = Math.max(
      0,
      tabs.current.findIndex((el) => el === e.target),
    );
    const last = sections.length - 1;
    const keys: Record<string, number> = {
      ArrowRight: from === last ? 0 : from + 1,
      ArrowLeft: from === 0 ? last : from - 1,
      Home: 0,
      End: last,
    };
    const next = keys[e.key];
    if (next === undefined) return;
    e.preventDefault();
    setCurrent(sections[next]!.id);
    tabs.current[next]?.focus();
  };
  const shown = sections[index]!;
  return (
    <section className={styles.sections} aria-label="Report tables">
      <div className={styles.tabs} role="tablist" aria-label="Report tables" onKeyDown={onKey}>
        {sections.map((s, i) => (
          <button
            key={s.id}
            ref={(el) => {
              tabs.current[i] = el;
            }}
            type="button"
            role="tab"
            id={`chaos-tab-${s.id}`}
            aria-selected={s.id === shown.id}
            aria-controls={`chaos-panel-${s.id}`}
            tabIndex={s.id === shown.id ? 0 : -1}
            className={styles.tab}
            onClick={() => setCurrent(s.id)}
            data-testid={`chaos-tab-${s.id}`}
          >
            <span className={styles.tabTitle}>{s.title}</span>
            <span className={styles.tabCount}>{s.count}</span>
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`chaos-panel-${shown.id}`} aria-labelledby={`chaos-tab-${shown.id}`} className={styles.panel}>
        <div className={styles.section}>
          <h2 className={styles.sectionTitle}>{shown.title}</h2>
          <p className={styles.sectionNote}>{shown.note}</p>
        </div>
        {shown.body}
      </div>
    </section>
  );
}
