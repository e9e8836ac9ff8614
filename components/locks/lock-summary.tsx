import type { LockView } from '@/lib/api/locks';
import { CopyButton } from '../ui/copy-button';
import { Countdown, CountdownBar } from './countdown';
import { seenTokens } from './lock-detail-nodes';
import { TokenChip } from './token-chip';
import { lockHues } from './token';
import { leaseMs } from './ttl';
import styles from './lock-detail.module.css';

/** The lock at a glance: the validity a client can count on, the majority token (or each token), the fence and the holder. */
export function LockSummary({ view, t0 }: { view: LockView; t0: number }) {
  const lease = leaseMs(view);
  const tone = view.state === 'expiring' ? 'warn' : 'ok';
  return (
    <div className={styles.tiles}>
      <div className={styles.tile} data-testid="detail-validity">
        <span className={styles.tileLabel}>Validity a client can count on</span>
        {view.majorityToken === null ? (
          <>
            <span className={`${styles.tileValue} ${styles.bad}`}>none</span>
            <span className={styles.tileNote}>No token is on {view.quorum} nodes: nobody holds this lock.</span>
          </>
        ) : view.validityMs === null ? (
          <>
            <span className={`${styles.tileValue} ${styles.bad}`}>never expires</span>
            <span className={styles.tileNote}>Keys without a TTL on node {view.noTtlNodes.join(', ')}.</span>
          </>
        ) : (
          <>
            <Countdown
              className={`${styles.tileValue} ${tone === 'warn' ? styles.warn : ''}`}
              expiresAt={t0 + view.validityMs}
              initialMs={view.validityMs}
            />
            <CountdownBar expiresAt={t0 + view.validityMs} initialMs={view.validityMs} totalMs={lease} tone={tone} />
          </>
        )}
        {view.overCeilingNodes.length > 0 ? (
          <span className={`${styles.tileNote} ${styles.warnNote}`} data-testid="detail-over-ceiling">
            Lease above the cluster&apos;s ceiling on node {view.overCeilingNodes.join(', ')}: the client that wrote it does not keep the
            ceiling, and the quarantine after a restart (sized by the ceiling) does not cover it.
          </span>
        ) : null}
      </div>
      <div className={styles.tile}>
        <span className={styles.tileLabel}>{view.majorityToken ? 'Majority token' : 'Tokens'}</span>
        {view.majorityToken ? (
          <TokenChip token={view.majorityToken} variant="majority" full />
        ) : (
          <span className={styles.tokenList}>
            {seenTokens(view).map((t, i) => (
              <span key={t.token} className={styles.tokenItem}>
                <strong>{String.fromCharCode(65 + i)}</strong>
                <TokenChip
                  token={t.token}
                  hue={lockHues(seenTokens(view).map((x) => x.token)).get(t.token)}
                  peers={seenTokens(view).map((x) => x.token)}
                />
                <span className="muted small">node {t.nodes.join(', ')}</span>
              </span>
            ))}
          </span>
        )}
        <span className={styles.tileNote} data-testid="detail-holders">
          {view.majorityToken
            ? `on ${view.holders} of ${view.cells.length} nodes · quorum ${view.quorum}`
            : `${view.tokens} token${view.tokens === 1 ? '' : 's'}, most held on ${view.holders} node${view.holders === 1 ? '' : 's'} · quorum ${view.quorum}`}
        </span>
      </div>
      <div className={styles.tile}>
        <span className={styles.tileLabel}>Fencing token</span>
        <span className={styles.tileValueRow}>
          <span className={`${styles.tileValue} ${styles.tileValueWhole} mono`} data-testid="detail-fence">
            {view.fence ?? '—'}
          </span>
          {view.fence !== null ? <CopyButton value={String(view.fence)} what="fence" /> : null}
        </span>
        <span className={styles.tileNote}>
          {view.fence !== null ? 'Pass it to the storage you protect; it rejects smaller ones.' : 'Not a fenced lock.'}
        </span>
      </div>
      <div className={styles.tile}>
        <span className={styles.tileLabel}>Holder</span>
        {/* Whole, wrapped: a phone's tile cut "inventory-sync" to "invento…". */}
        <span className={`${styles.tileValue} ${styles.tileValueName}`} data-testid="detail-holder">
          {view.meta?.owner ?? '—'}
        </span>
        {/* The owner is what the client wrote; the principal is who the console authenticated. */}
        <span className={styles.tileNote} data-testid="detail-principal">
          {[
            view.meta?.principal ? `authenticated as ${view.meta.principal}` : null,
            view.meta?.host,
            view.meta?.pid ? `pid ${view.meta.pid}` : null,
          ]
            .filter(Boolean)
            .join(' · ') || 'no metadata'}
        </span>
      </div>
    </div>
  );
}
