'use client';

import { useId, useRef, useState, type FormEvent } from 'react';
import { metaProblem, resourceNames, ttlProblem, waitProblem, type MetaRow } from './acquire-checks';
import { FencedSwitch, MetadataFields, TtlWaitFields } from './acquire-fields';
import { acquire } from './session-store';
import styles from './playground.module.css';

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
  const ids = { resources: useId(), ttl: useId(), wait: useId(), fenced: useId() };

  const names = resourceNames(resources);
  const ttlMs = Number(ttl);
  const ttlWrong = ttlProblem(ttlMs, maxTtl);
  const waitNumber = Number(waitMs || '0');
  const waitWrong = waitProblem(waitNumber);
  const metaWrong = metaProblem(meta);
  const valid = names.length > 0 && !ttlWrong && !waitWrong && !metaWrong;

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

      <TtlWaitFields
        ids={ids}
        ttl={ttl}
        onTtl={setTtl}
        waitMs={waitMs}
        onWait={setWaitMs}
        maxTtl={maxTtl}
        ttlProblem={ttlWrong}
        waitProblem={waitWrong}
      />
      <FencedSwitch id={ids.fenced} fenced={fenced} onFenced={setFenced} />
      <MetadataFields meta={meta} setMeta={setMeta} problem={metaWrong} />

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
