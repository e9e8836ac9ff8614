import type { NodeView } from '@/lib/api/nodes';
import { formatDuration } from '../ui/format';
import { formatRtt, persistenceInfo, type Tone } from './node-state';
import styles from './nodes.module.css';

/** The path to a node in words: direct (no fault proxy), pass-through, its latency, or the fault the proxy plays. */
function networkLabel(node: NodeView): string {
  return node.fault === null
    ? 'direct'
    : node.fault === 'pass'
      ? 'pass-through'
      : node.fault === 'latency'
        ? (node.faultDetail ?? 'latency')
        : node.fault;
}

/** A node's facts: persistence, uptime, round trip and network path (dashes while it is down). */
export function NodeFacts({ node }: { node: NodeView }) {
  const persistence = persistenceInfo(node.persistence);
  return (
    <div className={styles.facts}>
      <Fact label="Persistence" value={persistence.label} tone={node.up ? persistence.tone : 'neutral'} />
      <Fact label="Uptime" value={node.up ? formatDuration(node.uptimeMs) : '—'} />
      <Fact label="RTT" value={node.up ? formatRtt(node.rttMs) : '—'} tone={node.rttMs !== null && node.rttMs > 50 ? 'warn' : 'neutral'} />
      <Fact label="Network" value={networkLabel(node)} tone={node.fault && node.fault !== 'pass' ? 'warn' : 'neutral'} />
    </div>
  );
}

function Fact({ label, value, tone = 'neutral' }: { label: string; value: string; tone?: Tone }) {
  return (
    <div className={styles.fact}>
      <span className={styles.factLabel}>{label}</span>
      <span className={`${styles.factValue} ${tone !== 'neutral' ? styles[tone] : ''}`} title={value}>
        {value}
      </span>
    </div>
  );
}
