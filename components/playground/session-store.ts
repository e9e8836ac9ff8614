'use client';

import { useSyncExternalStore } from 'react';
import type { VoteView } from '@/lib/api/locks';
import { ApiError } from '@/lib/client/fetch-json';
import { acquireLock, errorCodeOf, extendLock, releaseLock, votesOfError, type AcquireInput } from '@/lib/client/lock-queries';

/**
 * The playground's memory: the locks taken by hand in this browser session (with their tokens)
 * and every operation with its per-node votes. It lives outside React so it survives moving to
 * another screen and back (and a keep-alive lock keeps being extended meanwhile, as a real
 * client's watchdog would), and in sessionStorage so a reload keeps the list.
 */

export type SessionLockStatus = 'held' | 'released' | 'lost';

export interface SessionLock {
  id: string;
  resources: string[];
  token: string;
  fence: number | null;
  fenced: boolean;
  ttlMs: number;
  metadata: Record<string, string>;
  acquiredAt: number;
  /** Local time until which the last grant or extension is valid (arrival time + validityMs). */
  validUntil: number;
  /** The lease the validity is counted against (the last ttl asked for). */
  leaseMs: number;
  status: SessionLockStatus;
  keepAlive: boolean;
  extensions: number;
  lastExtendedAt: number | null;
  /** Why the lock was lost, when it was. */
  note: string | null;
}

export type OperationKind = 'acquire' | 'extend' | 'release';

export interface OperationRecord {
  id: string;
  kind: OperationKind;
  at: number;
  durationMs: number;
  resources: string[];
  token: string | null;
  ok: boolean;
  /** HTTP status of a failure (409, 503, 400…), null when the request never got an answer. */
  status: number | null;
  code: string | null;
  message: string;
  votes: VoteView[] | null;
  fence: number | null;
  validityMs: number | null;
  /** An extension the keep-alive made on its own. */
  auto: boolean;
  /** Release: deleted keys and whether every node answered. */
  deleted: number | null;
}

export interface PlaygroundState {
  locks: SessionLock[];
  ops: OperationRecord[];
}

const STORAGE_KEY = 'redlock-console.playground';
const MAX_OPS = 40;
const EMPTY: PlaygroundState = { locks: [], ops: [] };

let state: PlaygroundState = EMPTY;
let loaded = false;
const listeners = new Set<() => void>();
const keepAliveTimers = new Map<string, ReturnType<typeof setTimeout>>();
let counter = 0;

function nextId(prefix: string): string {
  counter += 1;
  return `${prefix}-${Date.now().toString(36)}-${counter}`;
}

function set(update: (s: PlaygroundState) => PlaygroundState): void {
  state = update(state);
  try {
    sessionStorage.setItem(STORAGE_KEY, JSON.stringify(state));
  } catch {
    // storage full or blocked: the list lasts for this page only
  }
  listeners.forEach((l) => l());
}

function load(): void {
  if (loaded || typeof window === 'undefined') return;
  loaded = true;
  try {
    const raw = sessionStorage.getItem(STORAGE_KEY);
    if (raw) {
      const parsed = JSON.parse(raw) as PlaygroundState;
      if (Array.isArray(parsed.locks) && Array.isArray(parsed.ops)) state = parsed;
    }
  } catch {
    state = EMPTY;
  }
  for (const lock of state.locks)
    if (lock.keepAlive && lock.status === 'held' && lock.validUntil > Date.now()) scheduleKeepAlive(lock.id, 0);
}

function subscribe(listener: () => void): () => void {
  load();
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function usePlayground(): PlaygroundState {
  return useSyncExternalStore(
    subscribe,
    () => state,
    () => EMPTY,
  );
}

function patchLock(id: string, patch: Partial<SessionLock>): void {
  set((s) => ({ ...s, locks: s.locks.map((l) => (l.id === id ? { ...l, ...patch } : l)) }));
}

function record(op: Omit<OperationRecord, 'id'>): void {
  set((s) => ({ ...s, ops: [{ ...op, id: nextId('op') }, ...s.ops].slice(0, MAX_OPS) }));
}

function failure(err: unknown): Pick<OperationRecord, 'status' | 'code' | 'message' | 'votes'> {
  return {
    status: err instanceof ApiError ? err.status : null,
    code: errorCodeOf(err),
    message: err instanceof Error ? err.message : String(err),
    votes: votesOfError(err),
  };
}

export async function acquire(input: AcquireInput, signal?: AbortSignal): Promise<boolean> {
  const started = performance.now();
  const at = Date.now();
  try {
    const grant = await acquireLock(input, signal);
    const arrived = Date.now();
    const lock: SessionLock = {
      id: nextId('lock'),
      resources: grant.resources,
      token: grant.token,
      fence: grant.fence,
      fenced: input.fenced,
      ttlMs: input.ttlMs,
      metadata: input.metadata,
      acquiredAt: arrived,
      validUntil: arrived + grant.validityMs,
      leaseMs: input.ttlMs,
      status: 'held',
      keepAlive: false,
      extensions: 0,
      lastExtendedAt: null,
      note: null,
    };
    set((s) => ({ ...s, locks: [lock, ...s.locks] }));
    record({
      kind: 'acquire',
      at,
      durationMs: performance.now() - started,
      resources: grant.resources,
      token: grant.token,
      ok: true,
      status: 200,
      code: null,
      message: 'granted',
      votes: grant.votes,
      fence: grant.fence,
      validityMs: grant.validityMs,
      auto: false,
      deleted: null,
    });
    return true;
  } catch (err) {
    record({
      kind: 'acquire',
      at,
      durationMs: performance.now() - started,
      resources: input.resources,
      token: null,
      ok: false,
      ...failure(err),
      fence: null,
      validityMs: null,
      auto: false,
      deleted: null,
    });
    return false;
  }
}

export async function extend(id: string, ttlMs: number, auto = false): Promise<boolean> {
  const lock = state.locks.find((l) => l.id === id);
  if (!lock) return false;
  const started = performance.now();
  const at = Date.now();
  try {
    const result = await extendLock(lock.resources, lock.token, ttlMs);
    const arrived = Date.now();
    patchLock(id, {
      validUntil: arrived + result.validityMs,
      leaseMs: ttlMs,
      extensions: lock.extensions + 1,
      lastExtendedAt: arrived,
      status: 'held',
      note: null,
    });
    if (!auto) {
      record({
        kind: 'extend',
        at,
        durationMs: performance.now() - started,
        resources: lock.resources,
        token: lock.token,
        ok: true,
        status: 200,
        code: null,
        message: 'extended',
        votes: result.votes,
        fence: null,
        validityMs: result.validityMs,
        auto,
        deleted: null,
      });
    }
    return true;
  } catch (err) {
    const f = failure(err);
    // A refused extension (409) means the lock is gone or was taken over: say so on the card.
    if (f.status === 409) patchLock(id, { status: 'lost', keepAlive: false, note: f.message });
    if (auto && f.status !== 409) patchLock(id, { note: `keep-alive: ${f.message}` });
    record({
      kind: 'extend',
      at,
      durationMs: performance.now() - started,
      resources: lock.resources,
      token: lock.token,
      ok: false,
      ...f,
      fence: null,
      validityMs: null,
      auto,
      deleted: null,
    });
    return false;
  }
}

export async function release(id: string): Promise<boolean> {
  const lock = state.locks.find((l) => l.id === id);
  if (!lock) return false;
  stopKeepAlive(id);
  const started = performance.now();
  const at = Date.now();
  try {
    const result = await releaseLock(lock.resources, lock.token);
    patchLock(id, { status: 'released', keepAlive: false, note: result.released ? null : 'no node held it any more' });
    record({
      kind: 'release',
      at,
      durationMs: performance.now() - started,
      resources: lock.resources,
      token: lock.token,
      ok: true,
      status: 200,
      code: null,
      message: result.released
        ? result.complete
          ? 'released on every node'
          : 'released (some nodes did not answer)'
        : 'nothing to release',
      votes: result.votes,
      fence: null,
      validityMs: null,
      auto: false,
      deleted: result.deleted,
    });
    return true;
  } catch (err) {
    record({
      kind: 'release',
      at,
      durationMs: performance.now() - started,
      resources: lock.resources,
      token: lock.token,
      ok: false,
      ...failure(err),
      fence: null,
      validityMs: null,
      auto: false,
      deleted: null,
    });
    return false;
  }
}

function stopKeepAlive(id: string): void {
  const timer = keepAliveTimers.get(id);
  if (timer) clearTimeout(timer);
  keepAliveTimers.delete(id);
}

/** Extend a third of the way into each lease, like a client's watchdog; stops on the first refusal. */
function scheduleKeepAlive(id: string, delayMs: number): void {
  stopKeepAlive(id);
  keepAliveTimers.set(
    id,
    setTimeout(async () => {
      keepAliveTimers.delete(id);
      const lock = state.locks.find((l) => l.id === id);
      if (!lock || !lock.keepAlive || lock.status !== 'held') return;
      const ok = await extend(id, lock.ttlMs, true);
      const after = state.locks.find((l) => l.id === id);
      if (after?.keepAlive && after.status === 'held') scheduleKeepAlive(id, ok ? Math.max(100, after.ttlMs / 3) : 250);
    }, delayMs),
  );
}

export function setKeepAlive(id: string, on: boolean): void {
  patchLock(id, { keepAlive: on });
  if (on) {
    const lock = state.locks.find((l) => l.id === id);
    if (lock) scheduleKeepAlive(id, Math.max(0, Math.min(lock.ttlMs / 3, lock.validUntil - Date.now() - lock.ttlMs * 0.5)));
  } else {
    stopKeepAlive(id);
  }
}

export function forget(id: string): void {
  stopKeepAlive(id);
  set((s) => ({ ...s, locks: s.locks.filter((l) => l.id !== id) }));
}

export function clearLog(): void {
  set((s) => ({ ...s, ops: [] }));
}
