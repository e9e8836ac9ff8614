'use client';

import Link from 'next/link';
import { useEffect, useState } from 'react';
import { Countdown, CountdownBar } from '@/components/locks/countdown';
import { formatClock } from '@/components/locks/format';
import { TokenChip } from '@/components/locks/token-chip';
import { extend, forget, release, setKeepAlive, type SessionLock } from './session-store';
import styles from './playground.module.css';
import { CopyButton } from '../ui/copy-button';

/** One lock this browser session holds (or held): its token, fence and validity, and extend / release / keep alive. */
export function LockCard({ lock }: { lock: SessionLock }) {
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
