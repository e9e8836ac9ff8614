'use client';

import { useQuery } from '@tanstack/react-query';
import type { NodeView } from '@/lib/api/nodes';
import { nodesQuery } from '@/lib/client/queries';
import { formatDuration, formatMs } from '../ui/format';

export function NodeList() {
  const { data, error, isPending } = useQuery(nodesQuery());
  if (isPending) return <p className="muted" data-loading-state="loading">Reading the masters…</p>;
  if (error && !data) return <p className="callout callout-bad" role="alert">Could not read the nodes: {error.message}</p>;
  if (!data) return null;
  if (data.mode === 'unconfigured') {
    return <p className="callout callout-warn" role="alert">No masters are configured. Start the console with <code>npm start</code>, or set <code>REDLOCK_NODES</code>.</p>;
  }
  const upCount = data.nodes.filter((n) => n.up).length;
  const grantable = data.verdict.canGrant;
  return (
    <section data-loading-state="ready" aria-label="Nodes">
      <div className={`banner ${grantable ? 'banner-ok' : 'banner-bad'}`} data-testid="cluster-banner">
        <strong>{grantable ? 'Locks can be granted' : 'Locks cannot be granted'}</strong>
        <span>
          {upCount} of {data.nodes.length} masters reachable · {data.verdict.usable} usable · quorum {data.quorum}
        </span>
        <span className={`badge ${data.mode === 'sandbox' ? 'badge-sandbox' : 'badge-external'}`}>
          {data.mode === 'sandbox' ? 'sandbox cluster' : 'external masters'}
        </span>
      </div>
      <table className="table" data-testid="node-table">
        <thead>
          <tr>
            <th scope="col">Node</th>
            <th scope="col">State</th>
            <th scope="col">Address</th>
            <th scope="col">Persistence</th>
            <th scope="col">Uptime</th>
            <th scope="col">RTT</th>
          </tr>
        </thead>
        <tbody>
          {data.nodes.map((node) => (
            <NodeRow key={node.id} node={node} />
          ))}
        </tbody>
      </table>
      <p className="muted small">Read at {new Date(data.readAt).toLocaleTimeString()}</p>
    </section>
  );
}

function NodeRow({ node }: { node: NodeView }) {
  const state = nodeState(node);
  return (
    <tr data-testid={`node-row-${node.id}`} data-state={state.key}>
      <th scope="row">node {node.id}</th>
      <td>
        <span className={`dot dot-${state.tone}`} aria-hidden="true" /> <span data-testid={`node-state-${node.id}`}>{state.label}</span>
      </td>
      <td className="mono">{node.label}</td>
      <td>{node.persistence ?? '—'}</td>
      <td>{node.up ? formatDuration(node.uptimeMs) : '—'}</td>
      <td className="mono">{formatMs(node.rttMs)}</td>
    </tr>
  );
}

function nodeState(node: NodeView): { key: string; label: string; tone: 'ok' | 'warn' | 'bad' } {
  if (node.process === 'paused') return { key: 'paused', label: 'paused', tone: 'warn' };
  if (node.fault === 'blackhole') return { key: 'partitioned', label: 'partitioned', tone: 'warn' };
  if (node.up) return { key: 'up', label: node.fault === 'latency' ? 'up (slow)' : 'up', tone: node.fault === 'latency' ? 'warn' : 'ok' };
  if (node.restartAt) return { key: 'down', label: `down, restarts in ${formatDuration(node.restartAt - Date.now())}`, tone: 'bad' };
  return { key: 'down', label: 'down', tone: 'bad' };
}
