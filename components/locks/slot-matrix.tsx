'use client';

import type { LockView } from '@/lib/api/locks';
import type { SlotLockDetailResponse, SlotLockView } from '@/lib/api/slot-locks';
import { Countdown } from './countdown';
import { holderName } from './slot-lock-summary';
import { StateBadge } from './state-badge';
import { TokenChip } from './token-chip';
import { lockHues } from './token';
import styles from './slot-locks.module.css';

type Row = { slot: number | null; view: LockView | null };

/** Every slot up to the recorded limit (free ones too), any slot found past it, then the intent. */
function rowsOf(lock: SlotLockView): Row[] {
  const found = new Map(lock.rows.map((r) => [r.slot, r.view]));
  const top = Math.max(lock.limit ?? 0, ...lock.rows.map((r) => (r.slot ?? -1) + 1));
  const rows: Row[] = Array.from({ length: top }, (_, slot) => ({ slot, view: found.get(slot) ?? null }));
  if (found.has(null)) rows.push({ slot: null, view: found.get(null)! });
  return rows;
}

/** One node's key of one slot: its token (coloured as its holder), fence, PTTL and who it says it is. */
function Cell({ view, node, t0, hues }: { view: LockView | null; node: number; t0: number; hues: Map<string, number> }) {
  const cell = view?.cells.find((c) => c.node === node);
  if (cell && !cell.known) return <span className={styles.free}>unreadable</span>;
  if (!cell?.present || cell.token === null) return <span className={styles.free}>—</span>;
  const majority = view?.majorityToken;
  const name = holderName(cell);
  return (
    <div className={styles.cell} data-testid="slot-cell" data-token={cell.token}>
      <TokenChip
        token={cell.token}
        variant={majority === null ? 'plain' : cell.token === majority ? 'majority' : 'other'}
        hue={hues.get(cell.token)}
      />
      <span className={styles.cellMeta}>
        {cell.meta?.fence ? `fence ${cell.meta.fence} · ` : ''}
        {cell.pttlMs === null ? '' : cell.pttlMs < 0 ? 'no TTL' : <Countdown expiresAt={t0 + cell.pttlMs} initialMs={cell.pttlMs} />}
        {name ? ` · ${name}` : ''}
      </span>
    </div>
  );
}

/**
 * The quorum matrix of a semaphore or read-write lock: a row per slot (and the intent), a column
 * per master, each cell that node's key (token, fence, PTTL, holder). A slot is held where one
 * token is on a quorum: the row's state says so, as a lock's row does.
 */
export function SlotMatrix({ data, lock, t0 }: { data: SlotLockDetailResponse; lock: SlotLockView; t0: number }) {
  const hues = lockHues(lock.rows.flatMap((r) => r.view.cells.map((c) => c.token).filter((t): t is string => t !== null)));
  return (
    <div className={styles.scroll}>
      <table
        className={`table table-stack ${styles.table}`}
        data-testid="slot-matrix"
        aria-label={`Slots of ${lock.resource} on every master`}
      >
        <thead>
          <tr>
            <th scope="col">Slot</th>
            {data.nodes.map((n) => (
              <th scope="col" key={n.node}>
                node {n.node}
                {n.ok ? '' : ' (unreadable)'}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rowsOf(lock).map(({ slot, view }) => (
            <tr key={slot ?? 'intent'} data-testid="slot-row" data-slot={slot ?? 'intent'} data-state={view?.state ?? 'free'}>
              <th scope="row">
                <span className={styles.slotHead}>
                  <span>{slot === null ? 'writer intent' : `slot ${slot}`}</span>
                  {view ? <StateBadge state={view.state} /> : <span className={styles.free}>free</span>}
                </span>
              </th>
              {data.nodes.map((n) => (
                <td key={n.node} data-label={`node ${n.node}`}>
                  <Cell view={view} node={n.node} t0={t0} hues={hues} />
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
