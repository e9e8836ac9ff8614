import { useRef, type Dispatch, type SetStateAction } from 'react';
import type { MetaRow } from './acquire-checks';
import styles from './playground.module.css';

const TTL_PRESETS = [1_000, 5_000, 10_000, 30_000];

/** The TTL and the wait (digits only), presets up to the lease ceiling, and what is wrong with either. */
export function TtlWaitFields({
  ids,
  ttl,
  onTtl,
  waitMs,
  onWait,
  maxTtl,
  ttlProblem,
  waitProblem,
}: {
  ids: { ttl: string; wait: string };
  ttl: string;
  onTtl: (ttl: string) => void;
  waitMs: string;
  onWait: (waitMs: string) => void;
  maxTtl: number | null;
  ttlProblem: string | null;
  waitProblem: string | null;
}) {
  const ttlMs = Number(ttl);
  return (
    <>
      <div className={styles.fieldRow}>
        <label className={styles.field} htmlFor={ids.ttl}>
          <span className={styles.label}>TTL (ms)</span>
          <input
            id={ids.ttl}
            inputMode="numeric"
            value={ttl}
            onChange={(e) => onTtl(e.target.value.replace(/[^\d]/g, ''))}
            aria-invalid={!!ttlProblem}
            className={`${styles.mono} ${ttlProblem ? styles.invalid : ''}`}
          />
        </label>
        <label className={styles.field} htmlFor={ids.wait}>
          <span className={styles.label}>Wait up to (ms)</span>
          <input
            id={ids.wait}
            inputMode="numeric"
            value={waitMs}
            onChange={(e) => onWait(e.target.value.replace(/[^\d]/g, ''))}
            aria-invalid={!!waitProblem}
            className={`${styles.mono} ${waitProblem ? styles.invalid : ''}`}
          />
        </label>
      </div>
      <div className={styles.presets} role="group" aria-label="TTL presets">
        {TTL_PRESETS.filter((p) => maxTtl === null || p <= maxTtl).map((p) => (
          <button
            key={p}
            type="button"
            className={`${styles.preset} ${ttlMs === p ? styles.presetOn : ''}`}
            onClick={() => onTtl(String(p))}
          >
            {p / 1000} s
          </button>
        ))}
        {maxTtl !== null && !TTL_PRESETS.includes(maxTtl) && (
          <button
            type="button"
            className={`${styles.preset} ${ttlMs === maxTtl ? styles.presetOn : ''}`}
            onClick={() => onTtl(String(maxTtl))}
          >
            max
          </button>
        )}
      </div>
      {(ttlProblem || waitProblem) && (
        <small className={styles.problem} role="alert">
          {ttlProblem ? `TTL: ${ttlProblem}` : `Wait: ${waitProblem}`}
        </small>
      )}
    </>
  );
}

/** Fenced or not, as a switch, with what fencing adds. */
export function FencedSwitch({ id, fenced, onFenced }: { id: string; fenced: boolean; onFenced: (fenced: boolean) => void }) {
  return (
    <label className={styles.switch} htmlFor={id}>
      <input id={id} type="checkbox" checked={fenced} onChange={(e) => onFenced(e.target.checked)} />
      <span className={styles.switchTrack} aria-hidden="true">
        <span />
      </span>
      <span>
        <span className={styles.label}>Fenced</span>
        <small className={styles.hint}>A second round raises the nodes’ fence registers: the grant carries a number that only grows.</small>
      </span>
    </label>
  );
}

/** The lock's metadata, a name and value a row (up to 16), each name once. */
export function MetadataFields({
  meta,
  setMeta,
  problem,
}: {
  meta: MetaRow[];
  setMeta: Dispatch<SetStateAction<MetaRow[]>>;
  problem: string | null;
}) {
  const nextMetaId = useRef(2);
  return (
    <fieldset className={styles.metaSet}>
      <legend className={styles.label}>Metadata</legend>
      {meta.map((row, i) => (
        <div key={row.id} className={styles.metaRow}>
          <input
            aria-label={`Metadata field ${i + 1} name`}
            placeholder="field"
            value={row.key}
            spellCheck={false}
            onChange={(e) => setMeta((m) => m.map((r) => (r.id === row.id ? { ...r, key: e.target.value } : r)))}
            className={styles.mono}
          />
          <input
            aria-label={`Metadata field ${i + 1} value`}
            placeholder="value"
            value={row.value}
            onChange={(e) => setMeta((m) => m.map((r) => (r.id === row.id ? { ...r, value: e.target.value } : r)))}
          />
          <button
            type="button"
            className="button button-ghost"
            aria-label={`Remove metadata field ${i + 1}`}
            onClick={() => setMeta((m) => m.filter((r) => r.id !== row.id))}
          >
            ✕
          </button>
        </div>
      ))}
      {problem && <small className={styles.problem}>Metadata: {problem}</small>}
      <button
        type="button"
        className={`button button-ghost ${styles.addMeta}`}
        disabled={meta.length >= 16}
        onClick={() => setMeta((m) => [...m, { id: nextMetaId.current++, key: '', value: '' }])}
      >
        + Add field
      </button>
      <small className={styles.hint}>owner, host and pid are filled in by the console when you leave them out.</small>
    </fieldset>
  );
}
