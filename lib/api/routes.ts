import type { z } from 'zod';
import { apiKeyUsageResponseSchema } from './api-keys';
import { auditQuerySchema, auditResponseSchema } from './audit';
import { loginBodySchema, logoutBodySchema, logoutResponseSchema, meSchema } from './auth';
import { chaosReportResponseSchema } from './chaos-report';
import { eventsQuerySchema } from './events';
import { healthResponseSchema, readinessResponseSchema } from './health';
import { historyQuerySchema, historyResponseSchema } from './history';
import { lockHistoryQuerySchema, lockHistoryResponseSchema, lockServiceLogQuerySchema, lockServiceLogResponseSchema } from './lock-history';
import {
  acquireBodySchema,
  extendBodySchema,
  extendResponseSchema,
  bulkForceReleaseBodySchema,
  bulkForceReleaseResponseSchema,
  forceReleaseBodySchema,
  forceReleaseResponseSchema,
  lockDetailResponseSchema,
  lockGrantSchema,
  lockListQuerySchema,
  lockListResponseSchema,
  releaseBodySchema,
  releaseResponseSchema,
  resourceParamsSchema,
} from './locks';
import { SLOT_ROUTES } from './slot-routes';
import { SLOT_LOCK_ROUTES } from './slot-lock-routes';
import { nodeActionResponseSchema, nodeActionSchema } from './node-actions';
import { markCleanBodySchema, markCleanResponseSchema, nodeIdParamsSchema, nodesResponseSchema } from './nodes';
import {
  runActionBodySchema,
  runActionParamsSchema,
  runResponseSchema,
  scenarioListSchema,
  scenarioParamsSchema,
  startRunBodySchema,
} from './scenarios';

/**
 * Every route of the HTTP API, described once: what it does, who may call it, and the lib/api
 * schemas of its path, query, body and JSON answer. The OpenAPI document (openapi.ts, served at
 * GET /api/openapi.json) is generated from this list; a test fails when a route file or a route of
 * the lock service's fast path is missing here, or this list names a route that does not exist.
 */
export type Access = 'anyone' | 'viewer' | 'operator' | 'client or operator' | 'viewer or scrape token';

/** The groups of the API reference, each with what it is for (the OpenAPI document's tags). */
export const API_TAGS = {
  'lock service':
    'Take, extend and release locks, semaphore permits and read-write locks over HTTP, from programs in any language: an API key (Authorization: Bearer) or an operator session.',
  locks: 'What every master holds: the lock list across nodes, one lock in detail, its history, and token-safe force-release.',
  nodes: 'The masters: health, clock offset, quarantine, and the actions an operator may take on the local sandbox nodes.',
  auth: 'Signing in and out of the console; sessions live on the masters, so a logout holds across restarts and console processes.',
  audit: 'Every operator action and the lock service history, kept on the masters; JSON or CSV.',
  observability: 'Liveness, readiness, Prometheus metrics, live events and the charts behind the Overview.',
  scenarios: 'The guided teaching scenarios, run on the real nodes.',
} as const;
export type ApiTag = keyof typeof API_TAGS;

export interface ApiRoute {
  method: 'GET' | 'POST';
  /** OpenAPI form: `/api/locks/{resource}`. */
  path: string;
  summary: string;
  description?: string;
  tag: ApiTag;
  access: Access;
  params?: z.ZodType;
  query?: z.ZodType;
  body?: z.ZodType;
  /** The JSON answer's schema; null when the answer is not JSON (event stream, Prometheus text). */
  response: z.ZodType | null;
  /** Content type of a non-JSON answer. */
  produces?: string;
}

export const API_ROUTES: readonly ApiRoute[] = Object.freeze([
  {
    method: 'GET',
    path: '/api/health',
    tag: 'observability',
    access: 'anyone',
    summary: 'Liveness: the console process answers',
    response: healthResponseSchema,
  },
  {
    method: 'GET',
    path: '/api/ready',
    tag: 'observability',
    access: 'anyone',
    summary: 'Readiness: a quorum of masters is reachable',
    response: readinessResponseSchema,
  },
  {
    method: 'POST',
    path: '/api/auth/login',
    tag: 'auth',
    access: 'anyone',
    summary: 'Sign in: sets the session cookie and answers the CSRF token',
    body: loginBodySchema,
    response: meSchema,
  },
  {
    method: 'POST',
    path: '/api/auth/logout',
    tag: 'auth',
    access: 'viewer',
    summary: 'Sign out this session, or every session of the user (everywhere: true)',
    body: logoutBodySchema,
    response: logoutResponseSchema,
  },
  {
    method: 'GET',
    path: '/api/auth/me',
    tag: 'auth',
    access: 'viewer',
    summary: 'The signed-in user, role and CSRF token',
    response: meSchema,
  },
  {
    method: 'GET',
    path: '/api/nodes',
    tag: 'nodes',
    access: 'viewer',
    summary: 'Every master: up, RTT, clock offset, persistence, eviction policy, quarantine, safety verdict',
    response: nodesResponseSchema,
  },
  {
    method: 'POST',
    path: '/api/nodes/{id}/actions',
    tag: 'nodes',
    access: 'operator',
    summary: 'Crash, stop, start, restart, pause, resume, partition, heal or slow a sandbox master',
    params: nodeIdParamsSchema,
    body: nodeActionSchema,
    response: nodeActionResponseSchema,
  },
  {
    method: 'POST',
    path: '/api/nodes/{id}/mark-clean',
    tag: 'nodes',
    access: 'operator',
    summary: 'End a quarantine early, only if the node still has the sentinel the operator saw',
    params: nodeIdParamsSchema,
    body: markCleanBodySchema,
    response: markCleanResponseSchema,
  },
  {
    method: 'GET',
    path: '/api/locks',
    tag: 'locks',
    access: 'viewer',
    summary: 'The quorum view of every lock, paged with a stable cursor',
    description:
      "A fresh read or a pattern that starts a full scan spends its caller's scan budget: past it 429 TOO_MANY_REQUESTS with Retry-After.",
    query: lockListQuerySchema,
    response: lockListResponseSchema,
  },
  {
    method: 'POST',
    path: '/api/locks',
    tag: 'lock service',
    access: 'client or operator',
    summary: 'Acquire a lock (one resource or several); waitMs waits for the release',
    description:
      "200 with the grant; 409 LOCK_CONTENDED when held; 503 QUORUM_UNAVAILABLE without a quorum (after waitMs too, the last attempt says which); 429 TOO_MANY_REQUESTS with Retry-After past the API key's quota (details.quota: locks-held, acquire-rate or waiting).",
    body: acquireBodySchema,
    response: lockGrantSchema,
  },
  {
    method: 'GET',
    path: '/api/locks/{resource}',
    tag: 'locks',
    access: 'viewer',
    summary: 'One resource on every master, with its holder metadata',
    params: resourceParamsSchema,
    response: lockDetailResponseSchema,
  },
  {
    method: 'GET',
    path: '/api/locks/{resource}/history',
    tag: 'locks',
    access: 'viewer',
    summary: 'Who held the resource, through which key, for how long, and how each hold ended',
    params: resourceParamsSchema,
    query: lockHistoryQuerySchema,
    response: lockHistoryResponseSchema,
  },
  {
    method: 'POST',
    path: '/api/locks/{resource}/extend',
    tag: 'lock service',
    access: 'client or operator',
    summary: 'Extend a held lock by its token',
    params: resourceParamsSchema,
    body: extendBodySchema,
    response: extendResponseSchema,
  },
  {
    method: 'POST',
    path: '/api/locks/{resource}/release',
    tag: 'lock service',
    access: 'client or operator',
    summary: 'Release a lock by its token (compare-and-delete on every master)',
    params: resourceParamsSchema,
    body: releaseBodySchema,
    response: releaseResponseSchema,
  },
  ...SLOT_ROUTES,
  {
    method: 'POST',
    path: '/api/locks/{resource}/force-release',
    tag: 'locks',
    access: 'operator',
    summary: 'Force-release the token the operator saw; never touches a newer holder',
    params: resourceParamsSchema,
    body: forceReleaseBodySchema,
    response: forceReleaseResponseSchema,
  },
  {
    method: 'POST',
    path: '/api/force-release',
    tag: 'locks',
    access: 'operator',
    summary: 'Force-release several locks with one reason: each the compare-and-delete of the token the operator saw',
    body: bulkForceReleaseBodySchema,
    response: bulkForceReleaseResponseSchema,
  },
  ...SLOT_LOCK_ROUTES,
  {
    method: 'GET',
    path: '/api/lock-history',
    tag: 'audit',
    access: 'viewer',
    summary: "The lock service's log across resources, optionally one API key's or user's",
    query: lockServiceLogQuerySchema,
    response: lockServiceLogResponseSchema,
  },
  {
    method: 'GET',
    path: '/api/api-keys',
    tag: 'audit',
    access: 'viewer',
    summary:
      "Each API key's use of the lock service against its quotas (locks held, acquires a second, acquires waiting), in this console process",
    response: apiKeyUsageResponseSchema,
  },
  {
    method: 'GET',
    path: '/api/audit',
    tag: 'audit',
    access: 'viewer',
    summary: 'The audit log (JSON, or CSV with format=csv)',
    query: auditQuerySchema,
    response: auditResponseSchema,
  },
  {
    method: 'GET',
    path: '/api/events',
    tag: 'observability',
    access: 'viewer',
    summary:
      'Server-sent events: locks granted, extended, released, expired, force-released (past 64 in 250 ms, one lock.burst with counts); nodes up, down, quarantined. ?resource= follows one lock, never summarised',
    query: eventsQuerySchema,
    response: null,
    produces: 'text/event-stream',
  },
  {
    method: 'GET',
    path: '/api/metrics',
    tag: 'observability',
    access: 'viewer or scrape token',
    summary: 'Prometheus metrics',
    response: null,
    produces: 'text/plain; version=0.0.4',
  },
  {
    method: 'GET',
    path: '/api/history',
    tag: 'observability',
    access: 'viewer',
    summary: "The rolling ten minutes behind the Overview's charts",
    query: historyQuerySchema,
    response: historyResponseSchema,
  },
  {
    method: 'GET',
    path: '/api/scenarios',
    tag: 'scenarios',
    access: 'viewer',
    summary: 'The teaching scenarios',
    response: scenarioListSchema,
  },
  {
    method: 'GET',
    path: '/api/scenarios/runs/current',
    tag: 'scenarios',
    access: 'viewer',
    summary: 'The scenario run in progress: steps, timeline, checker',
    response: runResponseSchema,
  },
  {
    method: 'POST',
    path: '/api/scenarios/{id}/runs',
    tag: 'scenarios',
    access: 'operator',
    summary: 'Start a scenario on the sandbox masters',
    params: scenarioParamsSchema,
    body: startRunBodySchema,
    response: runResponseSchema,
  },
  {
    method: 'POST',
    path: '/api/scenarios/runs/current/{action}',
    tag: 'scenarios',
    access: 'operator',
    summary: 'Play, pause, step, predict, change speed, restart or cancel the current run',
    params: runActionParamsSchema,
    body: runActionBodySchema,
    response: runResponseSchema,
  },
  {
    method: 'GET',
    path: '/api/chaos/report',
    tag: 'observability',
    access: 'viewer',
    summary: 'The latest chaos harness report',
    response: chaosReportResponseSchema,
  },
  {
    method: 'GET',
    path: '/api/openapi.json',
    tag: 'observability',
    access: 'anyone',
    summary: 'This document (OpenAPI 3.1)',
    response: null,
    produces: 'application/json',
  },
]);
