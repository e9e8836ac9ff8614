/** Countdown text: "12.3 s" under a minute, "4m 05s" under an hour, then "2h 10m". Never negative. */
export function formatTtl(ms: number): string {
  if (!Number.isFinite(ms)) return '∞';
  const v = Math.max(0, ms);
  if (v < 10_000) return `${(Math.floor(v / 100) / 10).toFixed(1)} s`;
  if (v < 60_000) return `${Math.floor(v / 1000)} s`;
  const s = Math.floor(v / 1000);
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
  const m = Math.floor(s / 60);
  if (m < 48 * 60) return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, '0')}m`;
  return `${Math.floor(m / 1440)}d ${Math.floor((m % 1440) / 60)}h`;
}

export { formatClock } from '../ui/format';

/** "3 s ago", "4 min ago", from a reference time (pass the ticker's now). */
export function formatAgo(at: number, now: number): string {
  const s = Math.max(0, Math.round((now - at) / 1000));
  if (s < 60) return `${s} s ago`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ago`;
  const h = Math.floor(m / 60);
  return h < 48 ? `${h} h ago` : `${Math.floor(h / 24)} d ago`;
}

export function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}
