'use client';

import { useEffect, useRef, useSyncExternalStore, type CSSProperties, type RefObject } from 'react';
import { formatTtl } from './format';
import styles from './countdown.module.css';

/**
 * TTL countdowns without re-rendering: elements carry `data-expires-at` (local epoch ms) and one
 * animation-frame loop per screen rewrites the text (and bar width) of the ones in the DOM, about
 * ten times a second. With a virtualized list that is only the rows on screen, however many rows
 * the list has; React renders a row again only when its data changes.
 */
export function useCountdowns(root: RefObject<HTMLElement | null>, onExpire?: () => void, intervalMs = 100): void {
  const onExpireRef = useRef(onExpire);
  useEffect(() => {
    onExpireRef.current = onExpire;
  }, [onExpire]);
  useEffect(() => {
    let raf = 0;
    let last = -Infinity;
    const frame = (t: number) => {
      raf = requestAnimationFrame(frame);
      if (t - last < intervalMs) return;
      last = t;
      const el = root.current;
      if (!el) return;
      const now = Date.now();
      let expired = false;
      for (const node of el.querySelectorAll<HTMLElement>('[data-expires-at]')) {
        const left = Number(node.dataset.expiresAt) - now;
        const total = node.dataset.total;
        if (total !== undefined) {
          const fraction = Math.min(1, Math.max(0, left / Math.max(1, Number(total)))).toFixed(3);
          if (node.style.getPropertyValue('--left') !== fraction) node.style.setProperty('--left', fraction);
        } else {
          const text = formatTtl(left);
          if (node.textContent !== text) node.textContent = text;
        }
        if (left <= 0) {
          if (node.dataset.done !== '1') {
            node.dataset.done = '1';
            if (node.dataset.watch === '1') expired = true;
          }
        } else if (node.dataset.done === '1') {
          delete node.dataset.done;
        }
      }
      if (expired) onExpireRef.current?.();
    };
    raf = requestAnimationFrame(frame);
    return () => cancelAnimationFrame(raf);
  }, [root, intervalMs]);
}

/**
 * Text that counts down to `expiresAt` (local ms). `initialMs` is what it shows before the first
 * tick (the TTL as read). `watch`: reaching zero calls the screen's onExpire (to refresh).
 */
export function Countdown({
  expiresAt,
  initialMs,
  watch = false,
  className,
  testId,
}: {
  expiresAt: number;
  initialMs: number;
  watch?: boolean;
  className?: string;
  testId?: string;
}) {
  return (
    <span
      className={`${styles.countdown} ${className ?? ''}`}
      data-expires-at={expiresAt}
      data-watch={watch ? '1' : undefined}
      data-testid={testId}
    >
      {formatTtl(initialMs)}
    </span>
  );
}

/** A thin bar that shrinks from full (`totalMs` left) to empty at `expiresAt`. */
export function CountdownBar({
  expiresAt,
  initialMs,
  totalMs,
  tone = 'accent',
  className,
}: {
  expiresAt: number;
  initialMs: number;
  totalMs: number;
  tone?: 'accent' | 'ok' | 'warn' | 'bad' | 'token';
  className?: string;
}) {
  const fraction = Math.min(1, Math.max(0, initialMs / Math.max(1, totalMs)));
  return (
    <span
      className={`${styles.bar} ${styles[`bar-${tone}`]} ${className ?? ''}`}
      data-expires-at={expiresAt}
      data-total={totalMs}
      style={{ '--left': fraction.toFixed(3) } as CSSProperties}
      aria-hidden="true"
    >
      <span className={styles.fill} />
    </span>
  );
}

let now = typeof window === 'undefined' ? 0 : Date.now();
const listeners = new Set<() => void>();
let timer: ReturnType<typeof setInterval> | null = null;

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  if (!timer) {
    now = Date.now();
    timer = setInterval(() => {
      now = Date.now();
      listeners.forEach((l) => l());
    }, 1_000);
  }
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0 && timer) {
      clearInterval(timer);
      timer = null;
    }
  };
}

/** The time, updated once a second: for "read 3 s ago" texts (not for countdowns). */
export function useNow(): number {
  return useSyncExternalStore(
    subscribe,
    () => now,
    () => 0,
  );
}
