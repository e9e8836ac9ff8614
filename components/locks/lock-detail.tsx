'use client';

import { useQuery } from '@tanstack/react-query';
import { useMemo, useRef, useState } from 'react';
import type { LiveEvent } from '@/lib/api/events';
import type { LockView } from '@/lib/api/locks';
import { ApiError } from '@/lib/client/fetch-json';
import { useLiveEvents } from '@/lib/client/live-events';
import { lockDetailQuery, nodesQuery } from '@/lib/client/queries';
import { meQuery } from '@/lib/client/session';
import { BulkReleaseDialog } from './bulk-release-dialog';
import { useCountdowns, useNow } from './countdown';
import { ForceReleaseDialog } from './force-release-dialog';
import { formatClock } from './format';
import { LockDetailHead } from './lock-detail-head';
import { NodeTable, seenTokens } from './lock-detail-nodes';
import { LockEvents } from './lock-events';
import { LockHistoryPanel } from './lock-history-panel';
import { MetaList } from './lock-meta-list';
import { pickOf, type PickedLock } from './lock-selection';
import { LockSummary } from './lock-summary';
import type { SeenToken } from './seen-token-picker';
import styles from './lock-detail.module.css';

/** One lock read from every node: its head, summary, per-node table, holder metadata, live events and history; force-release from here. */
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
      <LockDetailHead
        resource={resource}
        data={data}
        now={now}
        isOperator={me?.role === 'operator'}
        tokenCount={tokens.length}
        onReleaseAll={() => view && setBulk([pickOf(view)])}
        onForceRelease={openDialog}
      />

      {view ? <LockSummary view={view} t0={t0} /> : <FreeNote resource={resource} last={mine[0]} />}

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
        <MetaCard view={view} now={now} />
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

/** No node holds the lock: when it was last seen to change, and that a client asking now would get it. */
function FreeNote({ resource, last }: { resource: string; last: LiveEvent | undefined }) {
  return (
    <div className={styles.free} data-testid="lock-free">
      <strong>No node holds this lock now</strong>
      <span>
        It was released or expired{last ? ` — last event: ${last.type.replace('lock.', '')} at ${formatClock(last.at)}` : ''}. A client
        asking for <code>{resource}</code> would be granted it.
      </span>
    </div>
  );
}

/** The holder metadata card, or why there is none. */
function MetaCard({ view, now }: { view: LockView | null; now: number }) {
  return (
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
  );
}
