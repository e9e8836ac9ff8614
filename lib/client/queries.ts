import { queryOptions } from '@tanstack/react-query';
import { nodesResponseSchema } from '../api/nodes';
import { fetchJson } from './fetch-json';

export const nodesQuery = () =>
  queryOptions({
    queryKey: ['nodes'] as const,
    queryFn: ({ signal }) => fetchJson('/api/nodes', nodesResponseSchema, { signal }),
    refetchInterval: 1_000,
    refetchIntervalInBackground: false,
  });
