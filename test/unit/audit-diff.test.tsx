import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';

process.env.TZ = 'Europe/Berlin';
const { AuditDiff } = await import('../../components/audit/audit-diff');
const { showDetail } = await import('../../components/audit/audit-fields');

const text = (html: string) => html.replace(/<[^>]+>/g, '|').replace(/\|+/g, '|');

describe("an audit entry's before → after", () => {
  it('names a force-release\'s fields in words and prints the PTTL with its unit, not "PTTLMS" in raw ms', () => {
    const html = renderToStaticMarkup(
      <AuditDiff
        before={[
          { node: 1, token: 'tok-a', pttlMs: 90_000 },
          { node: 2, token: 'tok-a', pttlMs: 850 },
          { node: 3, token: 'tok-a', pttlMs: -1 },
        ]}
        after={[
          { node: 1, outcome: 'deleted', token: null, pttlMs: null },
          { node: 2, outcome: 'deleted', token: null, pttlMs: null },
          { node: 3, outcome: 'deleted', token: null, pttlMs: null },
        ]}
      />,
    );
    const t = text(html);
    expect(t).toContain('|PTTL|');
    expect(t).not.toContain('pttlMs|');
    expect(t).toContain('1m 30s');
    expect(t).toContain('850 ms');
    expect(t).toContain('no TTL');
    expect(t).not.toContain('90000');
  });

  it("prints a node action's moments in the console's date format and its durations with units", () => {
    const restartAt = Date.UTC(2026, 10, 27, 3, 31, 21);
    const t = text(
      renderToStaticMarkup(
        <AuditDiff
          before={{ state: 'up', pid: 41, restartAt: null }}
          after={{ state: 'down', pid: null, restartAt, quarantineUntil: restartAt + 5_000 }}
        />,
      ),
    );
    expect(t).toContain('|Restarts at|');
    expect(t).toContain('2026-11-27 04:31:21 UTC+01:00');
    expect(t).toContain('|Quarantined until|—|2026-11-27 04:31:26 UTC+01:00');
    expect(t).toContain('|PID|');
    expect(showDetail(JSON.stringify({ action: 'restart', delayMs: 90_000, persistence: 'none' }))).toBe('Delay 1m 30s · Persistence none');
    expect(showDetail(JSON.stringify({ action: 'latency', latencyMs: 40, jitterMs: 10 }))).toBe('Latency 40 ms · Jitter 10 ms');
  });
});
