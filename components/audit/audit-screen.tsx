'use client';

import { useQuery } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { auditViewQuery } from '@/lib/client/ops-queries';
import { AuditFilters } from './audit-filters';
import { AuditHeader } from './audit-header';
import { AuditReadMeta } from './audit-read-meta';
import { AuditTable } from './audit-table';
import { useAuditParams } from './use-audit-params';

/** Who did what to which node or lock, read from every master; filter, page, expand, export. */
export function AuditScreen() {
  const [page, setPage] = useState(0);
  const { state: filterState, view, filtered, setParam } = useAuditParams(() => setPage(0));
  const query = useQuery(auditViewQuery(view));
  const data = query.data;
  const entries = useMemo(() => data?.entries ?? [], [data]);
  const actors = useMemo(() => [...new Set(entries.map((e) => e.actor))].sort(), [entries]);
  const state = query.isPending ? 'loading' : query.error && !data ? 'error' : entries.length ? 'ready' : 'empty';

  return (
    <>
      <AuditHeader filters={data?.filters} />
      <AuditFilters state={filterState} actors={actors} setParam={setParam}>
        <AuditReadMeta query={query} limit={filterState.limit} onMore={(next) => setParam({ limit: String(next) })} />
      </AuditFilters>
      <AuditTable state={state} entries={entries} errorMessage={query.error?.message} filtered={filtered} page={page} onPage={setPage} />
    </>
  );
}
