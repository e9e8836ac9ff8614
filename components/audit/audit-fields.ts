import { formatDateTime, formatDurationMs } from '../ui/format';

/**
 * How the audit log names and prints the fields of an entry's before/after and of a node action's
 * parameters: human labels ("PTTL", not "pttlMs"), durations with their unit ("1m 30s", "850 ms")
 * and moments in the console's one date format. What a field is follows from its name, as the
 * server writes it: `…Ms` is a duration in milliseconds, `…At` / `…Until` a moment (epoch ms).
 */
const LABELS: Record<string, string> = {
  pttlMs: 'PTTL',
  ttlMs: 'TTL',
  pid: 'PID',
  runId: 'Process run id',
  previousRunId: 'Previous run id',
  restartAt: 'Restarts at',
  createdAt: 'Written at',
  quarantineUntil: 'Quarantined until',
  latencyMs: 'Latency',
  jitterMs: 'Jitter',
  delayMs: 'Delay',
  seen: 'Sentinel seen',
};

type Kind = 'duration' | 'time' | 'plain';

export function fieldKind(key: string): Kind {
  if (/Ms$/.test(key)) return 'duration';
  if (/(At|Until)$/.test(key)) return 'time';
  return 'plain';
}

/** "PTTL", "Restarts at", or the name in words: `someFieldMs` → "Some field". */
export function fieldLabel(key: string): string {
  const known = LABELS[key];
  if (known) return known;
  const words = key
    .replace(/Ms$/, '')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

type Row = Record<string, unknown>;
export const isRecord = (v: unknown): v is Row => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A fault proxy mode ({kind, upMs, …}) in words: "latency ↑20 ms ±5 ↓20 ms ±5". */
function showFault(value: Row): string | null {
  if (typeof value.kind !== 'string') return null;
  if (value.kind !== 'latency') return Object.keys(value).length === 1 ? value.kind : null;
  const part = (ms: unknown, jitter: unknown) => `${String(ms)} ms${typeof jitter === 'number' && jitter > 0 ? ` ±${jitter}` : ''}`;
  return `latency ↑${part(value.upMs, value.upJitterMs)} ↓${part(value.downMs, value.downJitterMs)}`;
}

/** A compact, readable value: strings bare, fault modes in words, other objects as their fields, null as a dash. */
export function show(value: unknown): string {
  if (value === null || value === undefined || value === '') return '—';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (isRecord(value)) {
    const fault = showFault(value);
    if (fault !== null) return fault;
    return Object.entries(value)
      .map(([k, v]) => `${fieldLabel(k)} ${showField(k, v)}`)
      .join(' · ');
  }
  return JSON.stringify(value);
}

/** A field's value by what it is: "1m 30s", "850 ms", "2026-11-27 04:31:21 UTC+01:00", else show(). */
export function showField(key: string, value: unknown): string {
  if (typeof value !== 'number') return show(value);
  switch (fieldKind(key)) {
    case 'duration':
      // Redis's PTTL answers: -1 a key without a TTL, -2 no key.
      if (value === -1) return 'no TTL';
      if (value === -2) return 'no key';
      return formatDurationMs(value);
    case 'time':
      return formatDateTime(value);
    default:
      return String(value);
  }
}

/**
 * The detail of a node action is the action as sent ({"action":"latency","latencyMs":40}): shown
 * as its parameters ("Latency 40 ms · Jitter 10 ms"), or nothing when it has none.
 */
export function showDetail(detail: string): string {
  if (!detail.startsWith('{')) return detail;
  try {
    const parsed: unknown = JSON.parse(detail);
    if (!isRecord(parsed)) return detail;
    return Object.entries(parsed)
      .filter(([k]) => k !== 'action')
      .map(([k, v]) => `${fieldLabel(k)} ${showField(k, v)}`)
      .join(' · ');
  } catch {
    return detail;
  }
}
