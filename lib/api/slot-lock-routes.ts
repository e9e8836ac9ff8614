import type { ApiRoute } from './routes';
import { slotHistoryQuerySchema, slotHistoryResponseSchema } from './slot-history';
import {
  slotForceReleaseBodySchema,
  slotForceReleaseResponseSchema,
  slotLockDetailResponseSchema,
  slotLockListQuerySchema,
  slotLockListResponseSchema,
  slotLockParamsSchema,
} from './slot-locks';

/** The console's admin routes of semaphores and read-write locks (app/api/slot-locks), in API_ROUTES's order (routes.ts). */
export const SLOT_LOCK_ROUTES: readonly ApiRoute[] = [
  {
    method: 'GET',
    path: '/api/slot-locks',
    tag: 'locks',
    access: 'viewer',
    summary: 'Every semaphore and read-write lock on the masters: held permits, readers or the writer, a waiting writer, per quorum',
    query: slotLockListQuerySchema,
    response: slotLockListResponseSchema,
  },
  {
    method: 'GET',
    path: '/api/slot-locks/{kind}/{resource}',
    tag: 'locks',
    access: 'viewer',
    summary: "One semaphore or read-write lock read from every master: each slot's token, fence, holder and TTL per node",
    params: slotLockParamsSchema,
    response: slotLockDetailResponseSchema,
  },
  {
    method: 'GET',
    path: '/api/slot-locks/{kind}/{resource}/history',
    tag: 'locks',
    access: 'viewer',
    summary: "The lock history of some of its slots, merged, newest first: each hold's slots, who held it, its fence, how it ended",
    description: 'At most 16 slots a request (`slots=0,1,2`); a slot is a lock of its own in the history, under its slot name.',
    params: slotLockParamsSchema,
    query: slotHistoryQuerySchema,
    response: slotHistoryResponseSchema,
  },
  {
    method: 'POST',
    path: '/api/slot-locks/{kind}/{resource}/force-release',
    tag: 'locks',
    access: 'operator',
    summary: "Force-release one permit's slot, or one reader or the writer, by the token the operator saw; never another holder's key",
    description:
      '409 CONFLICT before anything is written when the token is not on the slot named (a semaphore) or on no slot (a read-write lock); every release is audited and written to the lock history under the slot names.',
    params: slotLockParamsSchema,
    body: slotForceReleaseBodySchema,
    response: slotForceReleaseResponseSchema,
  },
];
