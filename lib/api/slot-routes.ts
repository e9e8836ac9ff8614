import { resourceParamsSchema } from './locks';
import type { ApiRoute } from './routes';
import { rwAcquireBodySchema, rwExtendBodySchema, rwGrantSchema, rwReleaseBodySchema } from './rwlocks';
import {
  permitSchema,
  semaphoreAcquireBodySchema,
  slotsExtendBodySchema,
  slotsExtendResponseSchema,
  slotsReleaseBodySchema,
  slotsReleaseResponseSchema,
} from './semaphores';

/** The semaphore's and the read-write lock's routes (answered by the lock service), in API_ROUTES's order (routes.ts). */
export const SLOT_ROUTES: readonly ApiRoute[] = [
  {
    method: 'POST',
    path: '/api/semaphores',
    tag: 'lock service',
    access: 'client or operator',
    summary: 'Acquire permits of a fenced semaphore (at most `limit` holders); waitMs waits for a release',
    description:
      "200 with the permit: its token and slots (keep both to extend and release) and a fence per slot; 409 LOCK_CONTENDED when fewer than `permits` slots are free; 409 SEMAPHORE_LIMIT_MISMATCH when a holder was granted under another limit; 503 QUORUM_UNAVAILABLE without a quorum; 429 TOO_MANY_REQUESTS past the API key's quota (a permit of k slots counts k locks held).",
    body: semaphoreAcquireBodySchema,
    response: permitSchema,
  },
  {
    method: 'POST',
    path: '/api/semaphores/{resource}/extend',
    tag: 'lock service',
    access: 'client or operator',
    summary: 'Extend a permit by its token and slots',
    params: resourceParamsSchema,
    body: slotsExtendBodySchema,
    response: slotsExtendResponseSchema,
  },
  {
    method: 'POST',
    path: '/api/semaphores/{resource}/release',
    tag: 'lock service',
    access: 'client or operator',
    summary: 'Release a permit by its token and slots (compare-and-delete on every master)',
    params: resourceParamsSchema,
    body: slotsReleaseBodySchema,
    response: slotsReleaseResponseSchema,
  },
  {
    method: 'POST',
    path: '/api/rwlocks/{resource}/read',
    tag: 'lock service',
    access: 'client or operator',
    summary: 'Acquire a read lock (one of maxReaders reader slots); waits while a writer waits',
    description:
      '200 with the grant: its token and slot (keep both to extend and release); 409 LOCK_CONTENDED while a writer holds or waits, or every reader slot is taken; 409 SEMAPHORE_LIMIT_MISMATCH when a holder uses another maxReaders; 503 QUORUM_UNAVAILABLE without a quorum; 429 TOO_MANY_REQUESTS past the quota.',
    params: resourceParamsSchema,
    body: rwAcquireBodySchema,
    response: rwGrantSchema,
  },
  {
    method: 'POST',
    path: '/api/rwlocks/{resource}/write',
    tag: 'lock service',
    access: 'client or operator',
    summary: 'Acquire the write lock (every reader slot at once, fenced); new readers wait while it waits',
    description:
      '200 with the grant: its token, slots and fence (strictly increasing across writers); 409 LOCK_CONTENDED while readers or a writer hold; 409 SEMAPHORE_LIMIT_MISMATCH when a holder uses another maxReaders; 503 QUORUM_UNAVAILABLE without a quorum; 429 TOO_MANY_REQUESTS past the quota.',
    params: resourceParamsSchema,
    body: rwAcquireBodySchema,
    response: rwGrantSchema,
  },
  {
    method: 'POST',
    path: '/api/rwlocks/{resource}/extend',
    tag: 'lock service',
    access: 'client or operator',
    summary: 'Extend a read or write lock by its token and slots',
    params: resourceParamsSchema,
    body: rwExtendBodySchema,
    response: slotsExtendResponseSchema,
  },
  {
    method: 'POST',
    path: '/api/rwlocks/{resource}/release',
    tag: 'lock service',
    access: 'client or operator',
    summary: 'Release a read or write lock by its token and slots (compare-and-delete on every master)',
    params: resourceParamsSchema,
    body: rwReleaseBodySchema,
    response: slotsReleaseResponseSchema,
  },
];
