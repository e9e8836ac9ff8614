import { describe, expect, it } from 'vitest';
import { FaultModeError, MAX_FAULT_DELAY_MS, formatFaultMode, parseFaultMode, sameFaultMode, type FaultMode } from '@/lib/faults';

describe('parseFaultMode', () => {
  it.each<[unknown, FaultMode]>([
    [{ kind: 'pass' }, { kind: 'pass' }],
    [{ kind: 'blackhole' }, { kind: 'blackhole' }],
    [{ kind: 'reset' }, { kind: 'reset' }],
    ['blackhole', { kind: 'blackhole' }],
    [
      { kind: 'latency', upMs: 50, upJitterMs: 10, downMs: 0, downJitterMs: 60_000 },
      { kind: 'latency', upMs: 50, upJitterMs: 10, downMs: 0, downJitterMs: 60_000 },
    ],
    [
      { kind: 'latency', upMs: 5, downMs: 7 },
      { kind: 'latency', upMs: 5, upJitterMs: 0, downMs: 7, downJitterMs: 0 },
    ],
  ])('accepts %j', (input, expected) => {
    const mode = parseFaultMode(input);
    expect(mode).toEqual(expected);
    expect(Object.isFrozen(mode)).toBe(true);
    expect(mode).not.toBe(input);
  });

  const latency = (over: Record<string, unknown>): Record<string, unknown> => ({
    kind: 'latency',
    upMs: 10,
    upJitterMs: 0,
    downMs: 10,
    downJitterMs: 0,
    ...over,
  });

  it.each<[string, unknown, RegExp]>([
    ['null', null, /must be an object/],
    ['a number', 42, /must be an object/],
    ['an array', [{ kind: 'pass' }], /must be an object/],
    ['no kind', {}, /unknown fault mode kind undefined/],
    ['unknown kind', { kind: 'partition' }, /unknown fault mode kind "partition".*pass, blackhole, reset, latency/],
    ['unknown kind string', 'slow', /unknown fault mode kind "slow"/],
    ['latency as a bare string', 'latency', /needs upMs and downMs/],
    ['extra field on pass', { kind: 'pass', upMs: 1 }, /pass mode: unknown field "upMs"/],
    ['typo in latency field', latency({ upMS: 5 }), /unknown field "upMS"/],
    ['missing upMs', { kind: 'latency', downMs: 1 }, /upMs is required/],
    ['missing downMs', { kind: 'latency', upMs: 1 }, /downMs is required/],
    ['negative', latency({ downMs: -1 }), /downMs must not be negative, got -1/],
    ['NaN', latency({ upMs: Number.NaN }), /upMs must be a number of milliseconds, got NaN/],
    ['Infinity', latency({ upMs: Number.POSITIVE_INFINITY }), /upMs must be a whole number/],
    ['non-integer', latency({ upJitterMs: 1.5 }), /upJitterMs must be a whole number of milliseconds, got 1.5/],
    ['numeric string', latency({ upMs: '50' }), /upMs must be a number of milliseconds, got "50"/],
    ['huge', latency({ downJitterMs: MAX_FAULT_DELAY_MS + 1 }), /downJitterMs must be at most 60000 ms, got 60001/],
  ])('rejects %s', (_label, input, message) => {
    let caught: unknown;
    try {
      parseFaultMode(input);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(FaultModeError);
    expect((caught as Error).name).toBe('FaultModeError');
    expect((caught as Error).message).toMatch(message);
  });
});

describe('formatFaultMode / sameFaultMode', () => {
  it('formats modes for humans', () => {
    expect(formatFaultMode({ kind: 'blackhole' })).toBe('blackhole');
    expect(formatFaultMode({ kind: 'latency', upMs: 50, upJitterMs: 10, downMs: 20, downJitterMs: 0 })).toBe(
      'latency(up 50+0..10ms, down 20ms)',
    );
  });

  it('compares modes structurally', () => {
    const a: FaultMode = { kind: 'latency', upMs: 1, upJitterMs: 2, downMs: 3, downJitterMs: 4 };
    expect(sameFaultMode(a, { ...a })).toBe(true);
    expect(sameFaultMode(a, { ...a, downJitterMs: 5 })).toBe(false);
    expect(sameFaultMode({ kind: 'pass' }, { kind: 'pass' })).toBe(true);
    expect(sameFaultMode({ kind: 'pass' }, a)).toBe(false);
  });
});
