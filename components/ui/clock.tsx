'use client';

import { useSyncExternalStore } from 'react';
import { formatDateTime } from './format';
import { toneColor } from './palette';
import { staleAfterMs as staleAfter } from '@/lib/client/freshness';

/**
 * One shared ticker per period: every countdown and "read … ago" on a screen re-renders from the
 * same interval, and only the small leaf components that show time subscribe to it.
 */
interface Ticker {
  now: number;
  timer: ReturnType<typeof setInterval> | null;
  listeners: Set<() => void>;
  subscribe: (listener: () => void) => () => void;
  snapshot: () => number;
}

const tickers = new Map<number, Ticker>();

function ticker(periodMs: number): Ticker {
  const existing = tickers.get(periodMs);
  if (existing) return existing;
  const t: Ticker = {
    now: Date.now(),
    timer: null,
    listeners: new Set(),
    subscribe: (listener) => {
      t.listeners.add(listener);
      if (t.timer === null) {
        t.now = Date.now();
        t.timer = setInterval(() => {
          t.now = Date.now();
          for (const l of t.listeners) l();
        }, periodMs);
      }
      return () => {
        t.listeners.delete(listener);
        if (t.listeners.size === 0 && t.timer !== null) {
          clearInterval(t.timer);
          t.timer = null;
        }
      };
    },
    // Between ticks the value stays put (React reads it more than once per render); while nobody
    // listens it is refreshed on read, so a newly mounted component never starts from a stale time.
    snapshot: () => {
      if (t.timer === null && Date.now() - t.now > periodMs) t.now = Date.now();
      return t.now;
    },
  };
  tickers.set(periodMs, t);
  return t;
}

/** The local time, refreshed every `periodMs` (0 while rendering on the server). */
export function useNow(periodMs = 100): number {
  const t = ticker(periodMs);
  return useSyncExternalStore(t.subscribe, t.snapshot, () => 0);
}

/**
 * Server timestamps (readAt, checkedAt) are on the console server's clock. When the browser runs on
 * the same clock (the usual case) they are used as they are; when the answer seems to come from the
 * future or from implausibly long ago, the difference is taken as clock skew and corrected.
 */
export function skewMs(serverReadAt: number, receivedAt: number): number {
  const diff = receivedAt - serverReadAt;
  return diff < 0 || diff > 5_000 ? diff : 0;
}

/** "0.4 s", "12 s", "3m 05s". */
export function formatAge(ms: number): string {
  const s = Math.max(0, ms) / 1000;
  if (s < 10) return `${s.toFixed(1)} s`;
  if (s < 60) return `${Math.floor(s)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(Math.floor(s % 60)).padStart(2, '0')}s`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h ${String(m % 60).padStart(2, '0')}m`;
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}

/** A countdown: "4.3 s" below a minute, then "2m 10s". */
export function formatRemaining(ms: number): string {
  const s = Math.max(0, ms) / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  return formatAge(ms);
}

/**
 * "read 0.4 s ago": how old a number on screen is. Turns amber once it is older than `staleAfterMs`
 * (lib/client/freshness.ts: the one stale age)
 * (the refresh stopped, or the server is slow), so a frozen number never passes for a live one.
 */
export function ReadAge({
  at,
  staleAfterMs = staleAfter(),
  prefix = 'read',
  className,
  testId,
}: {
  at: number | null;
  staleAfterMs?: number;
  prefix?: string;
  className?: string;
  testId?: string;
}) {
  const now = useNow(100);
  if (at === null || now === 0)
    return (
      <span className={className} data-testid={testId}>
        {prefix} —
      </span>
    );
  const age = Math.max(0, now - at);
  const stale = age > staleAfterMs;
  return (
    <span
      className={className}
      data-testid={testId}
      data-stale={stale ? 'true' : undefined}
      style={stale ? { color: toneColor('warn') } : undefined}
      title={`${prefix} at ${formatDateTime(at)}${stale ? ' — not refreshed since' : ''}`}
    >
      {prefix} {formatAge(age)} ago{stale ? ' · stale' : ''}
    </span>
  );
}

/** Counts down to `until` (local ms) smoothly; renders `done` once it is reached. */
export function Countdown({ until, done = '0.0 s', testId }: { until: number; done?: string; testId?: string }) {
  const now = useNow(100);
  const left = until - (now || until);
  return (
    <span data-testid={testId} className="mono">
      {left > 0 ? formatRemaining(left) : done}
    </span>
  );
}

/** A bar that empties as `until` approaches (of a `totalMs` span). */
export function CountdownBar({
  until,
  totalMs,
  className,
  fillClassName,
}: {
  until: number;
  totalMs: number;
  className?: string;
  fillClassName?: string;
}) {
  const now = useNow(100);
  const left = Math.max(0, until - (now || until));
  const fraction = totalMs > 0 ? Math.min(1, left / totalMs) : 0;
  return (
    <span className={className} aria-hidden="true">
      <span className={fillClassName} style={{ transform: `scaleX(${fraction})` }} />
    </span>
  );
}
