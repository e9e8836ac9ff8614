import type { NodeView } from '@/lib/api/nodes';
import { evictionTone, formatOffset, formatRtt, persistenceInfo } from '../nodes/node-state';
import { formatDuration } from '../ui/format';
import { toneClass } from './node-card-tone';
import styles from './overview.module.css';

/** The node's facts: RTT, clock offset, persistence, eviction, uptime and fault proxy (dimmed while it is down). */
export function NodeCardFacts({ node }: { node: NodeView }) {
  const persistence = persistenceInfo(node.persistence);
  const dim = (value: string) => (node.up ? value : '—');
  return (
    <dl className={styles.facts}>
      <dt>RTT</dt>
      <dd className={node.rttMs === null ? styles.dim : node.rttMs > 50 ? styles.warn : ''}>{dim(formatRtt(node.rttMs))}</dd>
      <dt>Clock offset</dt>
      <dd className={node.clockOffsetMs === null ? styles.dim : ''} title="the node's clock minus this console's, RTT-corrected">
        {dim(formatOffset(node.clockOffsetMs))}
      </dd>
      <dt>Persistence</dt>
      <dd className={node.up ? toneClass(persistence.tone) : styles.dim}>{node.up || node.persistence ? persistence.label : '—'}</dd>
      <dt>Eviction</dt>
      <dd
        className={node.up ? toneClass(evictionTone(node.maxmemoryPolicy)) : styles.dim}
        title={node.refusal?.reason === 'unsafe-eviction' ? node.refusal.message : (node.maxmemoryPolicy ?? undefined)}
      >
        {dim(node.maxmemoryPolicy ?? '—')}
        {node.up && node.refusal?.reason === 'unsafe-eviction' ? ' · votes against' : ''}
      </dd>
      <dt>Uptime</dt>
      <dd className={node.up ? '' : styles.dim}>{dim(formatDuration(node.uptimeMs))}</dd>
      <dt>Fault proxy</dt>
      <dd className={node.fault === null || node.fault === 'pass' ? styles.dim : styles.warn} title={node.faultDetail ?? undefined}>
        {node.fault === null ? 'none' : node.fault === 'pass' ? 'pass-through' : (node.faultDetail ?? node.fault)}
      </dd>
    </dl>
  );
}
