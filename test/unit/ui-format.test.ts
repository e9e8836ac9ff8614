import { describe, expect, it } from 'vitest';

// A zone with an offset and summer time, so that "local" is not UTC in this test.
process.env.TZ = 'Europe/Berlin';
const { formatDateTime, formatDurationMs, formatTime, formatUtcOffset } = await import('../../components/ui/format');

describe('the console date-time format', () => {
  it('is local, 24-hour, with the UTC offset of that moment', () => {
    const winter = Date.UTC(2026, 10, 27, 3, 31, 21); // 04:31:21 in Berlin (UTC+1)
    expect(formatDateTime(winter)).toBe('2026-11-27 04:31:21 UTC+01:00');
    const summer = Date.UTC(2026, 6, 1, 21, 5, 9); // 23:05:09 in Berlin (UTC+2), not 11:05:09 PM
    expect(formatDateTime(summer)).toBe('2026-07-01 23:05:09 UTC+02:00');
    expect(formatTime(summer)).toBe('23:05:09');
    expect(formatUtcOffset(summer)).toBe('UTC+02:00');
    expect(formatDateTime(null)).toBe('—');
    expect(formatDateTime(Number.NaN)).toBe('—');
  });

  it('writes a negative offset with its minutes', () => {
    process.env.TZ = 'America/St_Johns';
    try {
      expect(formatDateTime(Date.UTC(2026, 0, 2, 0, 0, 0))).toBe('2026-01-01 20:30:00 UTC-03:30');
    } finally {
      process.env.TZ = 'Europe/Berlin';
    }
  });
});

describe('durations in milliseconds', () => {
  it('reads "850 ms" under a second and "1m 30s" above', () => {
    expect(formatDurationMs(850)).toBe('850 ms');
    expect(formatDurationMs(90_000)).toBe('1m 30s');
    expect(formatDurationMs(4_321)).toBe('4s');
    expect(formatDurationMs(null)).toBe('—');
  });
});
