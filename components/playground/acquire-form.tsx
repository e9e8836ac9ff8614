'use client';

import { useId, useRef, useState, type FormEvent } from 'react';
import { formatCount } from '@/components/locks/format';
import { acquire } from './session-store';
import styles from './playground.module.css';

interface MetaRow {
  id: number;
  key: string;
  value: string;
}

const TTL_PRESETS = [1_000, 5_000, 10_000, 30_000];

/** The acquire form: resources, TTL and wait, fenced or not, metadata; sends one acquire and shows it is waiting. */
export function AcquireForm({ maxTtl }: { maxTtl: number | null }) {
  const [resources, setResources] = useState('playground/report-42');
  const [ttl, setTtl] = useState('5000');
  const [waitMs, setWaitMs] = useState('0');
  const [fenced, setFenced] = useState(true);
  const [meta, setMeta] = useState<MetaRow[]>([{ id: 1, key: 'purpose', value: 'trying the playground' }]);
  const [busy, setBusy] = useState(false);
  const [startedAt, setStartedAt] = useState<number | null>(null);
  const abort = useRef<AbortController | null>(null);
  const nextMetaId = useRef(2);
  const ids = { resources: useId(), ttl: useId(), wait: useId(), fenced: useId() };

  const names = resources
    .split(/[,\n]/)
    .map((s) => s.trim())
    .filter(Boolean);
  const ttlMs = Number(ttl);
  const ttlProblem =
    !Number.isInteger(ttlMs) || ttlMs <= 0
      ? 'a whole number of ms above 0'
      : maxTtl !== null && ttlMs > maxTtl
        ? `at most ${formatCount(maxTtl)} ms (the cluster's lease ceiling)`
        : null;
  const waitNumber = Number(waitMs || '0');
  const waitProblem = !Number.isInteger(waitNumber) || waitNumber < 0 || waitNumber > 30_000 ? '0 to 30,000 ms' : null;
  const metaKeys = meta.map((m) => m.key.trim()).filter(Boolean);
  const metaProblem = new Set(metaKeys).size !== metaKeys.length ? 'each field once' : null;
  const valid = names.length > 0 && !ttlProblem && !waitProblem && !metaProblem;

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!valid || busy) return;
    const controller = new AbortController();
    abort.current = controller;
    setBusy(true);
    setStartedAt(Date.now());
    const metadata = Object.fromEntries(meta.filter((m) => m.key.trim()).map((m) => [m.key.trim(), m.value]));
    await acquire({ resources: names, ttlMs, fenced, metadata, waitMs: waitNumber }, controller.signal);
    abort.current = null;
    setBusy(false);
    setStartedAt(null);
  };

  return (
    <form className={`${styles.panel} ${styles.form}`} onSubmit={submit} aria-labelledby="acquire-title" data-testid="acquire-form">
      <div className={styles.panelHead}>
        <h2 id="acquire-title">Acquire</h2>
        <span className="muted small">POST /api/locks</span>
      </div>

      <label className={styles.field} htmlFor={ids.resources}>
        <span className={styles.label}>Resource</span>
        <input
          id={ids.resources}
          value={resources}
          onChange={(e) => setResources(e.target.value)}
          spellCheck={false}
          autoComplete="off"
          className={styles.mono}
        />
        <small className={styles.hint}>
          {names.length > 1
            ? `${names.length} resources: one lock over all of them`
            : 'Several? Separate with commas: one lock covers all.'}
        </small>
      </label>

      <div className={styles.fieldRow}>
        <label className={styles.field} htmlFor={ids.ttl}>
          <span className={styles.label}>TTL (ms)</span>
          <input
            id={ids.ttl}
            inputMode="numeric"
            value={ttl}
            onChange={(e) => setTtl(e.target.value.replace(/[^\d]/g, ''))}
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
            onChange={(e) => setWaitMs(e.target.value.replace(/[^\d]/g, ''))}
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
            onClick={() => setTtl(String(p))}
          >
            {p / 1000} s
          </button>
        ))}
        {maxTtl !== null && !TTL_PRESETS.includes(maxTtl) && (
          <button
            type="button"
            className={`${styles.preset} ${ttlMs === maxTtl ? styles.presetOn : ''}`}
            onClick={() => setTtl(String(maxTtl))}
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

      <label className={styles.switch} htmlFor={ids.fenced}>
        <input id={ids.fenced} type="checkbox" checked={fenced} onChange={(e) => setFenced(e.target.checked)} />
        <span className={styles.switchTrack} aria-hidden="true">
          <span />
        </span>
        <span>
          <span className={styles.label}>Fenced</span>
          <small className={styles.hint}>
            A second round raises the nodes’ fence registers: the grant carries a number that only grows.
          </small>
        </span>
      </label>

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
        {metaProblem && <small className={styles.problem}>Metadata: {metaProblem}</small>}
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

      <div className={styles.formActions}>
        {busy && waitNumber > 0 && (
          <button type="button" className="button" onClick={() => abort.current?.abort()}>
            Stop waiting
          </button>
        )}
        <button type="submit" className="button button-primary" disabled={!valid || busy} data-testid="acquire-button">
          {busy
            ? startedAt && waitNumber > 0
              ? 'Waiting for the lock…'
              : 'Asking the nodes…'
            : names.length > 1
              ? `Acquire ${names.length} resources`
              : 'Acquire'}
        </button>
      </div>
    </form>
  );
}
