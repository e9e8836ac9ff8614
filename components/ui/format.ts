/**
 * The console's one way to print durations and moments for a human. Machine formats (the audit
 * log's CSV and JSON exports, `<time dateTime>` attributes, API answers) keep ISO 8601 UTC; every
 * date a person reads on screen goes through formatDateTime or formatTime below, and the instant
 * of a reading (when the nodes or locks were read, to the millisecond) through formatClock: all
 * one local 24-hour clock, so the screens never mix ISO UTC, US 12-hour and 24-hour clocks.
 */

/** "3h 12m", "45s", "—" for null. */
export function formatDuration(ms: number | null): string {
  if (ms === null || !Number.isFinite(ms)) return '—';
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${s % 60}s`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h ${m % 60}m`;
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}

/** "850 ms" under a second (a lease, a round trip), else formatDuration's "1m 30s"; "—" for null. */
export function formatDurationMs(ms: number | null): string {
  if (ms === null || !Number.isFinite(ms)) return '—';
  return Math.abs(ms) < 1_000 ? `${Math.max(0, Math.round(ms))} ms` : formatDuration(ms);
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** "UTC+01:00", "UTC-05:30", "UTC+00:00": the local offset at that moment (summer time included). */
export function formatUtcOffset(at: number | string | Date): string {
  const minutes = -new Date(at).getTimezoneOffset();
  const sign = minutes < 0 ? '-' : '+';
  const abs = Math.abs(minutes);
  return `UTC${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

/** "04:31:21": local time, 24-hour, for a narrow column (pair it with formatDateTime in a title). */
export function formatTime(at: number | string | Date): string {
  const d = new Date(at);
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** "2026-11-27": the local date. */
export function formatDate(at: number | string | Date): string {
  const d = new Date(at);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

/** "2026-11-27 04:31:21 UTC+01:00": local date and 24-hour time with the UTC offset (from ms, an ISO string or a Date); "—" for null. */
export function formatDateTime(at: number | string | Date | null): string {
  if (at === null || !Number.isFinite(new Date(at).getTime())) return '—';
  return `${formatDate(at)} ${formatTime(at)} ${formatUtcOffset(at)}`;
}

/** "14:03:07.120" in local time. */
export function formatClock(at: number): string {
  const d = new Date(at);
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}
