'use client';

import { queryOptions } from '@tanstack/react-query';
import {
  slotForceReleaseResponseSchema,
  slotLockDetailResponseSchema,
  slotLockListResponseSchema,
  type SlotForceReleaseBody,
  type SlotForceReleaseResponse,
  type SlotKind,
} from '@/lib/api/slot-locks';
import { fetchJson } from '@/lib/client/fetch-json';
import { postJson } from '@/lib/client/session';

/** The Locks screen's kinds: the mutex (the quorum matrix) and the two kinds made of slots. */
export const LOCK_KINDS = ['mutex', 'semaphore', 'rwlock'] as const;
export type LockKind = (typeof LOCK_KINDS)[number];
export const KIND_LABEL: Record<LockKind, string> = { mutex: 'Mutex', semaphore: 'Semaphore', rwlock: 'RW lock' };

export const slotQueryKeys = {
  all: ['slot-locks'] as const,
  list: (kind: SlotKind | null, search: string) => ['slot-locks', 'list', kind ?? 'all', search] as const,
  one: (kind: SlotKind, resource: string) => ['slot-locks', 'one', kind, resource] as const,
  /** A force-release's dry run for one holder (its liveness and what each node would do). */
  dryRun: (kind: SlotKind, resource: string, token: string, slot: number | null) =>
    ['slot-locks', 'one', kind, resource, 'dry-run', token, slot ?? 'all'] as const,
};

const enc = encodeURIComponent;

/** Every semaphore and read-write lock (or one kind), refreshed every 2 s (the server shares one scan a second). */
export const slotLocksQuery = (kind: SlotKind | null, search: string) =>
  queryOptions({
    queryKey: slotQueryKeys.list(kind, search),
    queryFn: ({ signal }) => {
      const params = new URLSearchParams();
      if (kind) params.set('kind', kind);
      if (search.trim()) params.set('search', search.trim());
      const query = params.toString();
      return fetchJson(`/api/slot-locks${query ? `?${query}` : ''}`, slotLockListResponseSchema, { signal });
    },
    refetchInterval: 2_000,
  });

/** One semaphore or read-write lock read from every node, every second (as a lock's detail). */
export const slotLockQuery = (kind: SlotKind, resource: string) =>
  queryOptions({
    queryKey: slotQueryKeys.one(kind, resource),
    queryFn: ({ signal }) => fetchJson(`/api/slot-locks/${kind}/${enc(resource)}`, slotLockDetailResponseSchema, { signal }),
    refetchInterval: 1_000,
  });

export function forceReleaseSlot(kind: SlotKind, resource: string, body: SlotForceReleaseBody): Promise<SlotForceReleaseResponse> {
  return postJson(`/api/slot-locks/${kind}/${enc(resource)}/force-release`, body, slotForceReleaseResponseSchema);
}

/** Where a lock of this kind is shown in detail. */
export function detailHref(kind: LockKind, resource: string): string {
  return kind === 'mutex' ? `/locks/${enc(resource)}` : `/locks/${enc(resource)}?kind=${kind}`;
}
