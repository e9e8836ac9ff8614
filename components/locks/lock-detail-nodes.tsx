'use client';

import type { LockDetailResponse, LockView } from '@/lib/api/locks';
import { Countdown, CountdownBar } from './countdown';
import type { SeenToken } from './seen-token-picker';
import { hueStyle, lockHues } from './token';
import { TokenChip } from './token-chip';
import { leaseMs } from './ttl';
import styles from './lock-detail.module.css';

/** The tokens on the nodes, most held first (the majority's first when there is one). */
export function seenTokens(view: LockView): SeenToken[] {
  const byToken = new Map<string, number[]>();
  for (const cell of view.cells) {
    if (cell.known && cell.present && cell.token !== null) byToken.set(cell.token, [...(byToken.get(cell.token) ?? []), cell.node]);
  }
  return [...byToken.entries()]
    .map(([token, nodes]) => ({ token, nodes, majority: token === view.majorityToken }))
    .sort((a, b) => Number(b.majority) - Number(a.majority) || b.nodes.length - a.nodes.length || (a.token < b.token ? -1 : 1));
}

/** The lock on each node: what it holds, which token, its PTTL, the fence and extensions recorded there. */
export function NodeTable({
  data,
  view,
  t0,
  labels,
}: {
  data: LockDetailResponse;
  view: LockView | null;
  t0: number;
  labels: Map<number, string>;
}) {
  const lease = view ? leaseMs(view) : 1;
  const hues = lockHues((view ? seenTokens(view) : []).map((t) => t.token));
  const letters = new Map((view ? seenTokens(view) : []).map((t, i) => [t.token, String.fromCharCode(65 + i)]));
  return (
    <table className={`table table-stack ${styles.nodeTable}`} data-testid="detail-nodes">
      <thead>
        <tr>
          <th scope="col">Node</th>
          <th scope="col">Holds</th>
          <th scope="col">Token</th>
          <th scope="col" className={styles.ttlCol}>
            PTTL
          </th>
          <th scope="col">Fence here</th>
          <th scope="col">Extensions</th>
        </tr>
      </thead>
      <tbody>
        {data.nodes.map((n) => {
          const cell = view?.cells.find((c) => c.node === n.node);
          const status = !n.ok
            ? { label: 'unreachable', tone: 'bad' }
            : !cell?.present
              ? n.type && n.type !== 'none' && n.type !== 'string'
                ? { label: `not a lock (${n.type})`, tone: 'warn' }
                : { label: 'no key', tone: 'muted' }
              : view?.majorityToken === null
                ? { label: `token ${letters.get(cell.token ?? '') ?? '?'} · no majority`, tone: 'info' }
                : cell.token === view?.majorityToken
                  ? { label: 'majority token', tone: 'ok' }
                  : { label: 'other token', tone: 'warn' };
          return (
            <tr key={n.node} data-testid={`detail-node-${n.node}`} data-present={cell?.present ? 'true' : 'false'}>
              <th scope="row">
                <span className={styles.nodeName}>node {n.node}</span>
                <span className={styles.nodeLabel}>{labels.get(n.node) ?? ''}</span>
              </th>
              <td data-label="Holds">
                <span className={`${styles.pill} ${styles[`pill-${status.tone}`]}`}>{status.label}</span>
                {!n.ok && n.error ? <span className={styles.nodeError}>{n.error}</span> : null}
              </td>
              <td data-label="Token">
                {cell?.present && cell.token ? (
                  <TokenChip
                    token={cell.token}
                    variant={view?.majorityToken === null ? 'plain' : cell.token === view?.majorityToken ? 'majority' : 'other'}
                    full
                    hue={hues.get(cell.token)}
                  />
                ) : (
                  <span className="muted">—</span>
                )}
              </td>
              <td className={styles.ttlCol} data-label="PTTL">
                {cell?.present && cell.pttlMs !== null ? (
                  cell.pttlMs < 0 ? (
                    <span className={styles.bad}>no TTL</span>
                  ) : (
                    <div className={styles.ttlCell} style={cell.token ? hueStyle(cell.token, hues.get(cell.token)) : undefined}>
                      <Countdown expiresAt={t0 + cell.pttlMs} initialMs={cell.pttlMs} />
                      <CountdownBar
                        expiresAt={t0 + cell.pttlMs}
                        initialMs={cell.pttlMs}
                        totalMs={lease}
                        tone="token"
                        className={styles.ttlBar}
                      />
                    </div>
                  )
                ) : (
                  <span className="muted">—</span>
                )}
              </td>
              <td className="mono" data-label="Fence here">
                {cell?.meta?.fence ?? <span className="muted">—</span>}
              </td>
              <td className="mono" data-label="Extensions">
                {cell?.meta?.extensions ?? <span className="muted">—</span>}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
