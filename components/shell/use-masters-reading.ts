'use client';

import { useQuery } from '@tanstack/react-query';
import { useConnectionHealth } from '@/lib/client/connection-health';
import { mastersReading, type MastersReading } from '@/lib/client/masters-reading';
import { nodesQuery } from '@/lib/client/queries';
import { useNow } from '../ui/clock';

/** The masters' reading as every screen judges it (lib/client/masters-reading.ts), re-judged as it ages. */
export function useMastersReading(): MastersReading {
  const { data, dataUpdatedAt } = useQuery(nodesQuery());
  const health = useConnectionHealth();
  const now = useNow(500);
  return mastersReading({ nodes: data?.nodes, receivedAt: dataUpdatedAt, failing: health.failing, now });
}
