'use client';

import type { LockListPage } from '@/lib/client/queries';
import { formatClock, formatCount } from './format';
import controls from './lock-list-controls.module.css';

/** Masters the last reading could not read: their cells show as unknown. Nothing when all answered. */
export function UnreadableNodes({ latest }: { latest: LockListPage | undefined }) {
  const badNodes = latest?.nodes.filter((n) => !n.ok) ?? [];
  if (badNodes.length === 0) return null;
  return (
    <p className={`callout callout-warn ${controls.notice}`} role="status" data-testid="unreadable-nodes">
      <strong>
        {badNodes.length === 1
          ? `Node ${badNodes[0]!.node} could not be read`
          : `Nodes ${badNodes.map((n) => n.node).join(', ')} could not be read`}
      </strong>{' '}
      ({badNodes[0]!.error ?? 'no answer'}). {badNodes.length === 1 ? 'Its cells show' : 'Their cells show'} as unknown; states are computed
      from the nodes that answered.
    </p>
  );
}

/** A large list in a sort other than by resource is a snapshot: it says so and offers a reload. */
export function SnapshotNotice({ loaded, latest, onReload }: { loaded: number; latest: LockListPage | undefined; onReload: () => void }) {
  return (
    <p className={`callout ${controls.notice}`} role="status">
      Sorted within the {formatCount(loaded)} loaded rows, as read at {latest ? formatClock(latest.readAt) : '…'}. TTLs keep counting down;{' '}
      <button type="button" className={controls.linkButton} onClick={onReload}>
        reload
      </button>{' '}
      for fresh readings, or sort by resource to stay live.
    </p>
  );
}
