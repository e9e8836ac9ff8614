import { queryOptions } from '@tanstack/react-query';
import { chaosReportResponseSchema } from '@/lib/api/chaos-report';
import { ApiError, fetchJson } from '@/lib/client/fetch-json';
import { queryKeys } from '@/lib/client/queries';

/** The latest chaos report. A 404 (no report yet) is an answer, not something to retry. */
export const chaosReportQuery = () =>
  queryOptions({
    queryKey: queryKeys.chaosReport,
    queryFn: ({ signal }) => fetchJson('/api/chaos/report', chaosReportResponseSchema, { signal }),
    retry: (count, err) => !(err instanceof ApiError && err.status === 404) && count < 2,
    refetchInterval: 30_000,
  });
