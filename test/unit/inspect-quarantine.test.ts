import { describe, expect, it } from 'vitest';
import { markCleanWarningOf, quarantineOf, type ProcessFacts } from '@/lib/inspect/quarantine';
import { parseEpoch } from '@redlock-console/redlock';

const A = 'a1b2c3d4'.padEnd(40, '0');
const B = 'e5f6a7b8'.padEnd(40, '0');
const NOW = 1_800_000_000_000;
const facts: ProcessFacts = { nodeNow: NOW, runIdNow: B, uptimeMs: 10_000, maxTtlMs: 60_000, enabled: true };
const sentinel = (fields: Record<string, string | number>) => Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, String(v)]));

describe('quarantine as the console reads it', () => {
  it('a restart quarantine says so, with the two processes and the time left', () => {
    const q = quarantineOf(
      sentinel({
        createdAt: NOW - 9_000,
        quarantineUntil: NOW + 50_000,
        maxTtlMs: 60_000,
        origin: 'quarantine',
        cause: 'restart',
        runId: B,
        prevRunId: A,
        serverStartedAt: NOW - 10_000,
      }),
      facts,
    );
    expect(q).toMatchObject({
      state: 'quarantined',
      cause: 'restart',
      runId: B,
      prevRunId: A,
      remainingMs: 50_000,
      restartPending: false,
      createdAt: NOW - 9_000,
      recordedMaxTtlMs: 60_000,
    });
    expect(q.message).toMatch(/^restart detected \(process a1b2c3d4 → e5f6a7b8\): quarantined until .*Z \(50\.0 s left\)$/);
  });

  it('data loss and eviction are named as such', () => {
    const loss = quarantineOf(
      sentinel({ createdAt: NOW, quarantineUntil: NOW + 60_000, maxTtlMs: 60_000, origin: 'quarantine', cause: 'data-loss', runId: B }),
      facts,
    );
    expect(loss).toMatchObject({ state: 'quarantined', cause: 'data-loss' });
    expect(loss.message).toMatch(/^data loss: quarantined until/);
    const evicted = quarantineOf(
      sentinel({ createdAt: NOW, quarantineUntil: NOW + 60_000, maxTtlMs: 60_000, origin: 'quarantine', cause: 'eviction', runId: B }),
      facts,
    );
    expect(evicted.message).toMatch(/^keys evicted: quarantined until/);
  });

  it('a restart no client has recorded yet counts as the next check will count it: quarantined until the process start + maxTtl', () => {
    const q = quarantineOf(
      sentinel({ createdAt: NOW - 100_000, quarantineUntil: NOW - 100_000, maxTtlMs: 60_000, origin: 'clean', runId: A }),
      facts,
    );
    expect(q).toMatchObject({
      state: 'quarantined',
      cause: 'restart',
      restartPending: true,
      until: NOW - 10_000 + 60_000,
      remainingMs: 50_000,
    });
    expect(q.message).toMatch(/^restart detected \(process a1b2c3d4 → e5f6a7b8\): the next acquire records it; quarantined until/);
    // Older than the ceiling: nothing to sit out.
    const old = quarantineOf(
      sentinel({ createdAt: NOW - 100_000, quarantineUntil: NOW - 100_000, maxTtlMs: 60_000, origin: 'clean', runId: A }),
      { ...facts, uptimeMs: 90_000 },
    );
    expect(old).toMatchObject({ state: 'clean', cause: null, restartPending: true });
    // With the quarantine off the core detects nothing, and neither does the console.
    expect(
      quarantineOf(sentinel({ createdAt: NOW - 100_000, quarantineUntil: NOW - 100_000, maxTtlMs: 60_000, origin: 'clean', runId: A }), {
        ...facts,
        enabled: false,
      }).state,
    ).toBe('clean');
  });

  it('a clean sentinel of the running process is clean; none at all is unknown', () => {
    expect(
      quarantineOf(sentinel({ createdAt: NOW - 5_000, quarantineUntil: NOW - 5_000, maxTtlMs: 60_000, origin: 'clean', runId: B }), facts),
    ).toMatchObject({ state: 'clean', cause: null, restartPending: false, message: 'clean' });
    expect(quarantineOf({}, facts)).toMatchObject({
      state: 'unknown',
      until: null,
      markCleanWarning: expect.stringMatching(/no epoch sentinel/),
    });
  });
});

describe('the mark-clean warning covers any restart or data loss within maxTtl', () => {
  const epoch = (fields: Record<string, string | number>) => parseEpoch(sentinel({ maxTtlMs: 60_000, ...fields }));

  it('a process that started less than maxTtl ago', () => {
    expect(markCleanWarningOf(epoch({ createdAt: NOW, quarantineUntil: NOW, origin: 'clean', runId: B }), facts)).toMatch(
      /^its redis-server process started 10 s ago, less than the lease ceiling \(60 s\): a lock it had granted may still be valid/,
    );
  });

  it('a data loss found less than maxTtl ago, on a process that has been up for long', () => {
    const w = markCleanWarningOf(
      epoch({
        createdAt: NOW - 20_000,
        quarantineUntil: NOW + 40_000,
        origin: 'quarantine',
        cause: 'data-loss',
        runId: B,
        serverStartedAt: NOW - 3_600_000,
      }),
      { ...facts, uptimeMs: 3_600_000 },
    );
    expect(w).toMatch(/^a data loss was found 20 s ago, less than the lease ceiling/);
  });

  it('the recorded process start counts even when the uptime cannot be read', () => {
    const w = markCleanWarningOf(
      epoch({ createdAt: NOW - 70_000, quarantineUntil: NOW - 70_000, origin: 'clean', runId: B, serverStartedAt: NOW - 30_000 }),
      { ...facts, uptimeMs: null },
    );
    expect(w).toMatch(/^its redis-server process started 30 s ago/);
  });

  it('nothing within maxTtl: no warning', () => {
    expect(
      markCleanWarningOf(
        epoch({
          createdAt: NOW - 120_000,
          quarantineUntil: NOW + 1_000,
          origin: 'quarantine',
          cause: 'restart',
          runId: B,
          serverStartedAt: NOW - 3_600_000,
        }),
        { ...facts, uptimeMs: 3_600_000 },
      ),
    ).toBeNull();
  });
});
