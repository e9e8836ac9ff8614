'use client';

import { useQuery } from '@tanstack/react-query';
import { LockHistoryPanel } from './lock-history-panel';
import Link from 'next/link';
import { useMemo, useRef, useState, type ReactNode } from 'react';
import type { LockView } from '@/lib/api/locks';
import { ApiError } from '@/lib/client/fetch-json';
import { useLiveEvents } from '@/lib/client/live-events';
import { lockDetailQuery, nodesQuery } from '@/lib/client/queries';
import { meQuery } from '@/lib/client/session';
import { Countdown, CountdownBar, useCountdowns, useNow } from './countdown';
import { ForceReleaseDialog } from './force-release-dialog';
import type { SeenToken } from './seen-token-picker';
import { NodeTable, seenTokens } from './lock-detail-nodes';
import { formatAgo, formatClock } from './format';
import { LockEvents } from './lock-events';
import { StateBadge } from './state-badge';
import { TokenChip } from './token-chip';
import { lockHues } from './token';
import { leaseMs } from './ttl';
import styles from './lock-detail.module.css';
import { CopyButton } from '../ui/copy-button';
import { BulkReleaseDialog } from './bulk-release-dialog';
import { pickOf, type PickedLock } from './lock-selection';
import { formatDateTime } from '../ui/format';

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

export function LockDetail({ resource }: { resource: string }) {
  const { data: me } = useQuery(meQuery());
  const { data, error, isPending, dataUpdatedAt } = useQuery(lockDetailQuery(resource));
  const { data: nodesInfo } = useQuery(nodesQuery());
  const { events, connected } = useLiveEvents(200, resource);
  const [dialog, setDialog] = useState<{ tokens: SeenToken[]; token: string; seenAt: number } | null>(null);
  const [bulk, setBulk] = useState<PickedLock[] | null>(null);
  const root = useRef<HTMLDivElement>(null);
  useCountdowns(root);
  const now = useNow();
  const labels = useMemo(() => new Map(nodesInfo?.nodes.map((n) => [n.id, n.label]) ?? []), [nodesInfo]);
  const mine = useMemo(() => events.filter((e) => e.resource === resource), [events, resource]);
  const isOperator = me?.role === 'operator';

  if (isPending) {
    return (
      <div className={styles.loading} data-loading-state="loading">
        Reading {resource} from every node…
      </div>
    );
  }
  if (error && !data) {
    return (
      <div className="callout callout-bad" role="alert" data-loading-state="error">
        Could not read <code>{resource}</code>: {error.message}
        {error instanceof ApiError && error.status === 400 ? ' (is the resource name valid?)' : ''}
      </div>
    );
  }
  const view = data.view;
  const t0 = Math.min(data.readAt, dataUpdatedAt || data.readAt);
  const tokens = view ? seenTokens(view) : [];

  const openDialog = () => {
    if (!view || tokens.length === 0) return;
    // The token sent is the one on screen now: the majority's, else the most held. Never re-read.
    setDialog({ tokens, token: tokens[0]!.token, seenAt: data.readAt });
  };

  return (
    <div ref={root} className={styles.screen} data-testid="lock-detail" data-loading-state="ready" data-state={view?.state ?? 'absent'}>
      <nav className={styles.crumbs} aria-label="Breadcrumb">
        <Link href="/locks">Locks</Link>
        <span aria-hidden="true">/</span>
        <span className="mono">{resource}</span>
      </nav>

      <header className={styles.head}>
        <div className={styles.headMain}>
          <div className={styles.headTitle}>
            <h1 className={styles.resource}>{resource}</h1>
            <CopyButton value={resource} what="resource name" />
            {view ? (
              <StateBadge state={view.state} large />
            ) : (
              <span className={styles.freeBadge} data-testid="lock-state" data-state="free">
                free
              </span>
            )}
          </div>
          <div className={styles.headSub}>
            <code>{data.key}</code>
            <span>
              · read {formatClock(data.readAt)}
              {now ? ` (${formatAgo(data.readAt, now)})` : ''}
            </span>
          </div>
        </div>
        {isOperator && (
          <div className={styles.headActions}>
            {view && tokens.length > 1 ? (
              <button
                type="button"
                className={`button ${styles.danger}`}
                onClick={() => setBulk([pickOf(view)])}
                data-testid="release-all-tokens-button"
                title="One previewed force-release of every token this lock shows"
              >
                Release all {tokens.length} tokens…
              </button>
            ) : null}
            <button
              type="button"
              className={`button ${styles.danger}`}
              onClick={openDialog}
              disabled={!view}
              data-testid="force-release-button"
              title={view ? 'Compare-and-delete the token you see here, on every node' : 'Nothing to release'}
            >
              Force-release…
            </button>
          </div>
        )}
      </header>

      {view ? (
        <Summary view={view} t0={t0} />
      ) : (
        <div className={styles.free} data-testid="lock-free">
          <strong>No node holds this lock now</strong>
          <span>
            It was released or expired{mine[0] ? ` — last event: ${mine[0].type.replace('lock.', '')} at ${formatClock(mine[0].at)}` : ''}.
            A client asking for <code>{resource}</code> would be granted it.
          </span>
        </div>
      )}

      <section className={styles.card} aria-labelledby="nodes-title">
        <div className={styles.cardHead}>
          <h2 id="nodes-title">Per node</h2>
          <span className="muted small">
            Each master answers for itself, atomically: TYPE, PTTL, GET, and the holder metadata of the token it holds.
          </span>
        </div>
        <NodeTable data={data} view={view} t0={t0} labels={labels} />
      </section>

      <div className={styles.twoCol}>
        <section className={styles.card} aria-labelledby="meta-title">
          <div className={styles.cardHead}>
            <h2 id="meta-title">Holder metadata</h2>
            <span className="muted small">Written with the lock, same TTL</span>
          </div>
          {view?.meta ? (
            <MetaList view={view} now={now} />
          ) : (
            <p className={styles.emptyNote}>
              No metadata
              {view
                ? ' (a lock written by another client: its value is a bare token, or what follows the token is not readable metadata).'
                : '.'}
            </p>
          )}
        </section>
        <section className={styles.card} aria-labelledby="events-title">
          <div className={styles.cardHead}>
            <h2 id="events-title">Events</h2>
            <span className={`small ${connected ? styles.live : 'muted'}`}>{connected ? '● live' : 'connecting…'}</span>
          </div>
          <LockEvents events={mine} now={now} />
        </section>
      </div>

      <LockHistoryPanel resource={resource} />

      {bulk && <BulkReleaseDialog locks={bulk} onClose={() => setBulk(null)} />}
      {dialog && (
        <ForceReleaseDialog
          resource={resource}
          tokens={dialog.tokens}
          initialToken={dialog.token}
          seenAt={dialog.seenAt}
          labels={labels}
          onClose={() => setDialog(null)}
        />
      )}
    </div>
  );
}

function Summary({ view, t0 }: { view: LockView; t0: number }) {
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

function MetaList({ view, now }: { view: LockView; now: number }) {
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
