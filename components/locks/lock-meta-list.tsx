import type { ReactNode } from 'react';
import type { LockView } from '@/lib/api/locks';
import { formatDateTime } from '../ui/format';
import { formatAgo } from './format';
import styles from './lock-detail.module.css';

const META_ORDER = ['principal', 'owner', 'host', 'pid', 'purpose', 'acquiredAt', 'extensions', 'fence', 'ttlMs', 'via'] as const;
const META_LABEL: Record<string, string> = {
  principal: 'Authenticated as',
  owner: 'Owner (as claimed)',
  host: 'Host',
  pid: 'PID',
  purpose: 'Purpose',
  acquiredAt: 'Acquired',
  extensions: 'Extensions',
  fence: 'Fence',
  ttlMs: 'Requested TTL',
  via: 'Via',
};

/** The holder's metadata, the known fields first in their order, then the others by name (whose holder, when no majority). */
export function MetaList({ view, now }: { view: LockView; now: number }) {
  const meta = view.meta ?? {};
  const keys = [
    ...META_ORDER.filter((k) => k in meta),
    ...Object.keys(meta)
      .filter((k) => !(META_ORDER as readonly string[]).includes(k))
      .sort(),
  ];
  const fenceNodes = view.cells.filter((c) => c.meta?.fence !== undefined).map((c) => c.node);
  const source = view.cells.find((c) => c.meta !== null && JSON.stringify(c.meta) === JSON.stringify(view.meta));
  return (
    <>
      {view.majorityToken === null && source && (
        <p className={styles.emptyNote}>
          No majority: this is the metadata of the holder on node {source.node}. Other holders wrote their own.
        </p>
      )}
      <dl className={styles.meta} data-testid="detail-meta">
        {keys.map((key) => {
          const value = meta[key]!;
          let shown: ReactNode = value;
          if (key === 'acquiredAt' && Number.isFinite(Number(value))) {
            const at = Number(value);
            shown = (
              <>
                {formatDateTime(at)} <span className="muted">({now ? formatAgo(at, now) : ''})</span>
              </>
            );
          } else if (key === 'ttlMs') shown = `${Number(value).toLocaleString('en-US')} ms`;
          else if (key === 'fence' && fenceNodes.length > 0 && fenceNodes.length < view.cells.length) {
            shown = (
              <>
                {value} <span className="muted">(recorded on node {fenceNodes.join(', ')}: the nodes that confirmed it)</span>
              </>
            );
          }
          return (
            <div key={key} className={styles.metaRow} data-meta={key}>
              <dt>{META_LABEL[key] ?? key}</dt>
              <dd className={key === 'purpose' || key === 'acquiredAt' ? '' : 'mono'}>{shown}</dd>
            </div>
          );
        })}
      </dl>
    </>
  );
}
