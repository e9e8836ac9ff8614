'use client';

import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useEffect, useId, useRef, useState, type FormEvent } from 'react';
import { Countdown, CountdownBar, useCountdowns } from '@/components/locks/countdown';
import { formatClock, formatCount } from '@/components/locks/format';
import { TokenChip } from '@/components/locks/token-chip';
import { nodesQuery } from '@/lib/client/queries';
import { meQuery } from '@/lib/client/session';
import {
  acquire,
  clearLog,
  extend,
  forget,
  release,
  setKeepAlive,
  usePlayground,
  type OperationRecord,
  type SessionLock,
} from './session-store';
import { VoteStrip } from './vote-strip';
import styles from './playground.module.css';
import { CopyButton } from '../ui/copy-button';

interface MetaRow {
  id: number;
  key: string;
  value: string;
}

const TTL_PRESETS = [1_000, 5_000, 10_000, 30_000];

export function Playground() {
  const { data: me, isPending } = useQuery(meQuery());
  if (isPending) return null;
  if (me?.role !== 'operator') {
    return (
      <section className={styles.refused} data-testid="playground-refused">
        <h1 className={styles.title}>Playground</h1>
        <div className={styles.refusedCard} role="alert">
          <span className={styles.refusedIcon} aria-hidden="true">
            <svg
              width="22"
              height="22"
              viewBox="0 0 24 24"
              fill="none"
              stroke="currentColor"
              strokeWidth="2"
              strokeLinecap="round"
              strokeLinejoin="round"
            >
              <rect x="4" y="11" width="16" height="10" rx="2" />
              <path d="M8 11V7a4 4 0 0 1 8 0v4" />
            </svg>
          </span>
          <strong>Operators only</strong>
          <p>
            The playground takes, extends and releases real locks on the masters. You are signed in as{' '}
            <span className={styles.roleTag}>{me?.role ?? 'nobody'}</span>, which can look but not touch.
          </p>
          <Link className="button" href="/locks">
            Open the quorum matrix
          </Link>
        </div>
      </section>
    );
  }
  return <PlaygroundScreen />;
}

function PlaygroundScreen() {
  const { locks, ops } = usePlayground();
  const { data: cluster } = useQuery(nodesQuery());
  const root = useRef<HTMLDivElement>(null);
  useCountdowns(root);
  const maxTtl = cluster?.maxTtlMs ?? null;

  return (
    <div ref={root} className={styles.screen} data-testid="playground">
      <div className={styles.titleRow}>
        <div>
          <h1 className={styles.title}>Playground</h1>
          <p className={styles.subtitle}>
            Take, extend and release locks by hand on the real masters. Every answer shows how each node voted.
          </p>
        </div>
        {cluster && (
          <div
            className={`${styles.clusterPill} ${cluster.verdict.canGrant ? styles.clusterOk : styles.clusterBad}`}
            data-testid="playground-cluster"
          >
            <span className={styles.clusterDot} aria-hidden="true" />
            <span>
              <strong>{cluster.verdict.canGrant ? 'Locks can be granted' : 'Locks cannot be granted'}</strong>
              <span className="muted">
                {' '}
                · {cluster.verdict.usable} of {cluster.verdict.configuredNodes} usable · quorum {cluster.quorum} · max TTL{' '}
                {formatCount(cluster.maxTtlMs)} ms
              </span>
            </span>
          </div>
        )}
      </div>

      <div className={styles.grid}>
        <AcquireForm maxTtl={maxTtl} />
        <div className={styles.column}>
          <section className={styles.panel} aria-labelledby="session-locks-title">
            <div className={styles.panelHead}>
              <h2 id="session-locks-title">
                Your locks <span className={styles.count}>{locks.filter((l) => l.status === 'held').length} held</span>
              </h2>
              <span className="muted small">This browser session; tokens stay here so you can extend and release them.</span>
            </div>
            {locks.length === 0 ? (
              <div className={styles.emptyPanel} data-testid="session-locks-empty">
                <strong>No locks yet</strong>
                <span>Acquire one on the left. Try the same resource twice to see a 409 with the contended votes.</span>
              </div>
            ) : (
              <ul className={styles.lockList} data-testid="session-locks">
                {locks.map((lock) => (
                  <LockCard key={lock.id} lock={lock} />
                ))}
              </ul>
            )}
          </section>

          <section className={styles.panel} aria-labelledby="ops-title">
            <div className={styles.panelHead}>
              <h2 id="ops-title">
                Operations <span className={styles.count}>{ops.length}</span>
              </h2>
              {ops.length > 0 && (
                <button type="button" className="button button-ghost small" onClick={clearLog}>
                  Clear
                </button>
              )}
            </div>
            {ops.length === 0 ? (
              <p className="muted small">Each acquire, extend and release lands here with its votes, node by node.</p>
            ) : (
              <ol className={styles.ops} data-testid="operations">
                {ops.map((op) => (
                  <OperationItem key={op.id} op={op} quorum={cluster?.quorum ?? null} />
                ))}
              </ol>
            )}
          </section>
        </div>
      </div>
    </div>
  );
}

function AcquireForm({ maxTtl }: { maxTtl: number | null }) {
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

function LockCard({ lock }: { lock: SessionLock }) {
  const [ttl, setTtl] = useState(String(lock.ttlMs));
  const [busy, setBusy] = useState<null | 'extend' | 'release'>(null);
  const expired = useExpired(lock.validUntil);
  const status = lock.status === 'held' ? (expired ? 'expired' : 'held') : lock.status;
  const held = status === 'held';
  const ttlMs = Number(ttl);
  const run = async (what: 'extend' | 'release') => {
    setBusy(what);
    if (what === 'extend') await extend(lock.id, ttlMs);
    else await release(lock.id);
    setBusy(null);
  };
  const first = lock.resources[0]!;
  return (
    <li
      className={`${styles.lockCard} ${styles[`lock-${status}`]}`}
      data-testid="session-lock"
      data-resource={first}
      data-status={status}
      data-token={lock.token}
    >
      <div className={styles.lockTop}>
        <div className={styles.lockNames}>
          {lock.resources.map((r) => (
            <code key={r} className={styles.lockResource}>
              {r}
            </code>
          ))}
        </div>
        <span className={`${styles.status} ${styles[`status-${status}`]}`} data-testid="session-lock-status">
          {status}
        </span>
      </div>
      <div className={styles.lockBody}>
        <div className={styles.lockFacts}>
          <span className={styles.factLabel}>Token</span>
          <TokenChip token={lock.token} full variant="majority" />
          <span className={styles.factLabel}>Fence</span>
          <span>
            <span className={styles.mono} data-testid="session-lock-fence">
              {lock.fence ?? (lock.fenced ? '—' : 'not fenced')}
            </span>
            {lock.fence !== null ? <CopyButton value={String(lock.fence)} what="fence" /> : null}
          </span>
          <span className={styles.factLabel}>Taken</span>
          <span>
            {formatClock(lock.acquiredAt)}
            {lock.extensions > 0 ? ` · extended ${lock.extensions}×` : ''}
            {lock.keepAlive ? ' · kept alive' : ''}
          </span>
        </div>
        <div className={styles.lockValidity}>
          <span className={styles.factLabel}>Validity</span>
          {held ? (
            <>
              <Countdown
                className={styles.validityBig}
                expiresAt={lock.validUntil}
                initialMs={lock.validUntil - (lock.lastExtendedAt ?? lock.acquiredAt)}
              />
              <CountdownBar
                expiresAt={lock.validUntil}
                initialMs={lock.validUntil - (lock.lastExtendedAt ?? lock.acquiredAt)}
                totalMs={lock.leaseMs}
                tone="ok"
              />
            </>
          ) : (
            <span className={styles.validityGone}>{status === 'expired' ? 'ran out' : '—'}</span>
          )}
        </div>
      </div>
      {lock.note && <p className={styles.lockNote}>{lock.note}</p>}
      <div className={styles.lockActions}>
        {held && (
          <>
            <label className={styles.inlineTtl}>
              <input
                aria-label={`Extend ${first} by (ms)`}
                inputMode="numeric"
                value={ttl}
                onChange={(e) => setTtl(e.target.value.replace(/[^\d]/g, ''))}
                className={styles.mono}
              />
              <span className="muted small">ms</span>
            </label>
            <button
              type="button"
              className="button"
              onClick={() => void run('extend')}
              disabled={busy !== null || !(ttlMs > 0)}
              data-testid="extend-button"
            >
              {busy === 'extend' ? 'Extending…' : 'Extend'}
            </button>
            <button
              type="button"
              className="button"
              onClick={() => void run('release')}
              disabled={busy !== null}
              data-testid="release-button"
            >
              {busy === 'release' ? 'Releasing…' : 'Release'}
            </button>
            <label
              className={styles.keepAlive}
              title="Extend a third of the way into each lease, like a client's watchdog; stops when an extension is refused"
            >
              <input
                type="checkbox"
                checked={lock.keepAlive}
                onChange={(e) => setKeepAlive(lock.id, e.target.checked)}
                data-testid="keep-alive"
              />
              Keep alive
            </label>
          </>
        )}
        {!held && (
          <button type="button" className="button button-ghost" onClick={() => forget(lock.id)}>
            Remove from list
          </button>
        )}
        <span className={styles.spacer} />
        <Link className={styles.link} href={`/locks?search=${encodeURIComponent(first)}`} data-testid="open-in-matrix">
          Matrix ↗
        </Link>
        <Link className={styles.link} href={`/locks/${encodeURIComponent(first)}`}>
          Detail ↗
        </Link>
      </div>
    </li>
  );
}

/** Has this local time passed? Re-renders once when it does. */
function useExpired(at: number): boolean {
  const [expiredAt, setExpiredAt] = useState<number | null>(null);
  useEffect(() => {
    const left = at - Date.now();
    const timer = setTimeout(() => setExpiredAt(at), Math.max(0, left));
    return () => clearTimeout(timer);
  }, [at]);
  return expiredAt === at;
}

const KIND_LABEL: Record<OperationRecord['kind'], string> = { acquire: 'Acquire', extend: 'Extend', release: 'Release' };

function outcomeOf(op: OperationRecord): { text: string; tone: 'ok' | 'warn' | 'bad' } {
  if (op.ok) {
    if (op.kind === 'release' && op.deleted === 0) return { text: 'nothing to release', tone: 'warn' };
    return {
      text: op.kind === 'acquire' ? 'granted' : op.kind === 'extend' ? 'extended' : `released · ${op.deleted ?? 0} keys deleted`,
      tone: 'ok',
    };
  }
  if (op.status === 409) return { text: op.code === 'LOCK_EXPIRED' ? '409 · expired' : '409 · contended', tone: 'warn' };
  if (op.status === 503) return { text: '503 · no quorum', tone: 'bad' };
  if (op.status === null) return { text: 'no answer', tone: 'bad' };
  return { text: `${op.status} · ${op.code ?? 'error'}`, tone: 'bad' };
}

function OperationItem({ op, quorum }: { op: OperationRecord; quorum: number | null }) {
  const outcome = outcomeOf(op);
  return (
    <li className={styles.op} data-testid="operation" data-kind={op.kind} data-ok={op.ok ? 'true' : 'false'} data-status={op.status ?? ''}>
      <div className={styles.opHead}>
        <span className={`${styles.kind} ${styles[`kind-${op.kind}`]}`}>
          {KIND_LABEL[op.kind]}
          {op.auto ? ' (keep-alive)' : ''}
        </span>
        <code className={styles.opResource}>{op.resources.join(', ')}</code>
        <span className={`${styles.outcome} ${styles[`outcome-${outcome.tone}`]}`} data-testid="operation-outcome">
          {outcome.text}
        </span>
        <span className={styles.opFacts}>
          {op.fence !== null && (
            <span>
              fence <strong className={styles.mono}>{op.fence}</strong>
            </span>
          )}
          {op.validityMs !== null && (
            <span>
              validity <strong className={styles.mono}>{formatCount(Math.round(op.validityMs))} ms</strong>
            </span>
          )}
          <span className="muted">
            {formatClock(op.at)} · {Math.round(op.durationMs)} ms
          </span>
        </span>
      </div>
      {!op.ok && (
        <p className={styles.opError} role={op.auto ? undefined : 'alert'}>
          {op.message}
        </p>
      )}
      {op.votes && op.votes.length > 0 ? (
        <VoteStrip votes={op.votes} kind={op.kind} quorum={quorum} />
      ) : !op.ok ? (
        <p className="muted small">No per-node votes in this answer (the request was refused before reaching the nodes).</p>
      ) : null}
    </li>
  );
}
