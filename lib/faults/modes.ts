/**
 * Fault modes of a {@link FaultProxy}: the types, and the one parser that validates them.
 *
 * Every mode that enters a proxy goes through {@link parseFaultMode}, so a proxy never holds a
 * half-valid mode (a NaN delay, a typo'd field name silently ignored, an hour-long latency).
 */

/** Upper bound of every delay and jitter value, in milliseconds. */
export const MAX_FAULT_DELAY_MS = 60_000;

/**
 * What a fault proxy does to the traffic passing through it.
 *
 * - `pass`: a plain bidirectional pipe.
 * - `blackhole`: a partition that drops packets but keeps connections up. Nothing is forwarded in
 *   either direction; data is held (bounded) and delivered in order once the mode changes back.
 * - `reset`: every open connection is reset (TCP RST), and new ones are reset as soon as accepted.
 * - `latency`: each chunk is delivered after `base + uniform(0, jitter)` ms in its direction, in
 *   order. `up` is client → server, `down` is server → client.
 */
export type FaultMode =
  | { kind: 'pass' }
  | { kind: 'blackhole' }
  | { kind: 'reset' }
  | { kind: 'latency'; upMs: number; upJitterMs: number; downMs: number; downJitterMs: number };

export type FaultModeKind = FaultMode['kind'];

export const FAULT_MODE_KINDS: readonly FaultModeKind[] = Object.freeze(['pass', 'blackhole', 'reset', 'latency']);

/** Thrown by {@link parseFaultMode} (and so by `FaultProxy.setMode`) on an invalid mode. */
export class FaultModeError extends Error {
  override readonly name = 'FaultModeError' as const;
  constructor(message: string) {
    super(message);
  }
}

const LATENCY_FIELDS = ['upMs', 'upJitterMs', 'downMs', 'downJitterMs'] as const;
type LatencyField = (typeof LATENCY_FIELDS)[number];
/** Jitter may be omitted (it defaults to 0); base delays may not. */
const OPTIONAL_LATENCY_FIELDS: ReadonlySet<LatencyField> = new Set(['upJitterMs', 'downJitterMs']);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value == null) return String(value);
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

function parseDelay(field: LatencyField, value: unknown): number {
  if (typeof value !== 'number' || Number.isNaN(value)) {
    throw new FaultModeError(`latency mode: ${field} must be a number of milliseconds, got ${describe(value)}`);
  }
  if (!Number.isInteger(value)) {
    throw new FaultModeError(`latency mode: ${field} must be a whole number of milliseconds, got ${value}`);
  }
  if (value < 0) {
    throw new FaultModeError(`latency mode: ${field} must not be negative, got ${value}`);
  }
  if (value > MAX_FAULT_DELAY_MS) {
    throw new FaultModeError(`latency mode: ${field} must be at most ${MAX_FAULT_DELAY_MS} ms, got ${value}`);
  }
  return value;
}

function rejectUnknownKeys(input: Record<string, unknown>, allowed: readonly string[], kind: string): void {
  const unknown = Object.keys(input).filter((key) => !allowed.includes(key));
  if (unknown.length > 0) {
    throw new FaultModeError(
      `${kind} mode: unknown field${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => JSON.stringify(k)).join(', ')}` +
        ` (allowed: ${allowed.join(', ')})`,
    );
  }
}

/**
 * Validates `input` and returns a fresh, frozen {@link FaultMode}.
 *
 * Accepts a mode object (`{ kind: 'latency', upMs: 50, downMs: 50 }`; jitter fields default to 0),
 * or for the modes without parameters just the kind as a string (`'blackhole'`).
 * Unknown kinds, unknown fields, and delays that are not whole numbers in [0, 60000] are refused.
 *
 * @throws FaultModeError with a message naming the offending field and value.
 */
export function parseFaultMode(input: unknown): FaultMode {
  const record: unknown = typeof input === 'string' ? { kind: input } : input;
  if (!isRecord(record)) {
    throw new FaultModeError(`fault mode must be an object with a "kind", got ${describe(input)}`);
  }
  const kind = record.kind;
  switch (kind) {
    case 'pass':
    case 'blackhole':
    case 'reset':
      rejectUnknownKeys(record, ['kind'], kind);
      return Object.freeze({ kind });
    case 'latency': {
      if (typeof input === 'string') {
        throw new FaultModeError('latency mode needs upMs and downMs: pass an object, not a string');
      }
      rejectUnknownKeys(record, ['kind', ...LATENCY_FIELDS], kind);
      const values = {} as Record<LatencyField, number>;
      for (const field of LATENCY_FIELDS) {
        const raw = record[field];
        if (raw === undefined && OPTIONAL_LATENCY_FIELDS.has(field)) {
          values[field] = 0;
        } else if (raw === undefined) {
          throw new FaultModeError(`latency mode: ${field} is required`);
        } else {
          values[field] = parseDelay(field, raw);
        }
      }
      return Object.freeze({ kind: 'latency', ...values });
    }
    default:
      throw new FaultModeError(`unknown fault mode kind ${describe(kind)} (expected one of: ${FAULT_MODE_KINDS.join(', ')})`);
  }
}

/** A short human-readable form, for logs and the console: `latency(up 50+0..10ms, down 50ms)`. */
export function formatFaultMode(mode: FaultMode): string {
  if (mode.kind !== 'latency') return mode.kind;
  const part = (base: number, jitter: number): string => (jitter > 0 ? `${base}+0..${jitter}ms` : `${base}ms`);
  return `latency(up ${part(mode.upMs, mode.upJitterMs)}, down ${part(mode.downMs, mode.downJitterMs)})`;
}

/** Structural equality of two modes. */
export function sameFaultMode(a: FaultMode, b: FaultMode): boolean {
  if (a.kind !== 'latency' || b.kind !== 'latency') return a.kind === b.kind;
  return LATENCY_FIELDS.every((field) => a[field] === b[field]);
}
