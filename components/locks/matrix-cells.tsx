import type { LockView } from '@/lib/api/locks';
import { Countdown, CountdownBar } from './countdown';
import { hueStyle } from './token';
import { TokenChip } from './token-chip';
import styles from './lock-matrix.module.css';

type Cell = LockView['cells'][number];

/** One node's cell of a lock's row: unknown, no key, or its token (coloured among the lock's tokens) with its PTTL counting down. */
export function NodeCell({
  cell,
  node,
  majority,
  t0,
  lease,
  overCeiling,
  hue,
  peers,
}: {
  /** This token's hue among the lock's tokens (lockHues). */
  hue: number | undefined;
  /** The lock's tokens: the chip's short form is unique among them. */
  peers: readonly string[];
  cell: Cell | undefined;
  node: number;
  majority: string | null;
  t0: number;
  lease: number;
  /** Its PTTL is above the cluster's lease ceiling. */
  overCeiling: boolean;
}) {
  if (!cell || !cell.known) {
    return (
      <div role="cell" className={`${styles.cell} ${styles.cellUnknown}`} data-testid="lock-cell" data-node={node} data-present="unknown">
        <span className={styles.cellNote}>unknown</span>
      </div>
    );
  }
  if (!cell.present || cell.token === null) {
    return (
      <div role="cell" className={`${styles.cell} ${styles.cellAbsent}`} data-testid="lock-cell" data-node={node} data-present="false">
        <span className="visually-hidden">no key</span>
        <span className={styles.cellDash} aria-hidden="true" />
      </div>
    );
  }
  const variant = majority === null ? 'plain' : cell.token === majority ? 'majority' : 'other';
  const pttl = cell.pttlMs ?? 0;
  return (
    <div
      role="cell"
      className={`${styles.cell} ${styles.cellPresent} ${variant === 'other' ? styles.cellOther : ''}`}
      style={hueStyle(cell.token, hue)}
      data-testid="lock-cell"
      data-node={node}
      data-present="true"
      data-token={cell.token}
      data-over-ceiling={overCeiling || undefined}
      title={overCeiling ? `node ${node}: PTTL above the cluster's lease ceiling` : undefined}
    >
      <TokenChip token={cell.token} variant={variant} className={styles.cellChip} tabbable={false} hue={hue} peers={peers} />
      {cell.pttlMs === -1 ? (
        <span className={styles.noTtl} title="This key never expires: a lock nobody can take again until an operator releases it">
          no TTL
        </span>
      ) : (
        <>
          {overCeiling ? <span className="visually-hidden">PTTL above the lease ceiling:</span> : null}
          <Countdown
            className={`${styles.cellTtl} ${overCeiling ? styles.overCeiling : ''}`}
            expiresAt={t0 + pttl}
            initialMs={pttl}
            watch
          />
          <CountdownBar className={styles.cellBar} expiresAt={t0 + pttl} initialMs={pttl} totalMs={lease} tone="token" />
        </>
      )}
    </div>
  );
}

/** The row's last cell: the validity a client holding the majority token can count on, or why there is none. */
export function ValidityCell({ view, t0, lease }: { view: LockView; t0: number; lease: number }) {
  const validityTone = view.state === 'expiring' ? 'warn' : 'ok';
  return (
    <div role="cell" className={styles.validityCell} data-testid="lock-validity">
      {view.majorityToken === null ? (
        <span className={styles.noMajority} title="No token is on a quorum of nodes: no client can count on this lock">
          no majority
        </span>
      ) : view.validityMs === null ? (
        <span className={styles.noTtl}>never expires</span>
      ) : (
        <>
          <Countdown
            className={`${styles.validity} ${styles[`validity-${validityTone}`]}`}
            expiresAt={t0 + view.validityMs}
            initialMs={view.validityMs}
            watch
          />
          <CountdownBar expiresAt={t0 + view.validityMs} initialMs={view.validityMs} totalMs={lease} tone={validityTone} />
        </>
      )}
    </div>
  );
}
