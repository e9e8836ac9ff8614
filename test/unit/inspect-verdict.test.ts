import { describe, expect, it } from 'vitest';
import { clusterVerdict, parseInfo, safetyVerdict, type HealthFacts, type NodeHealth, type QuarantineInfo } from '@/lib/inspect';
import { refusalOf } from '@/lib/inspect/verdict';

const clean: QuarantineInfo = {
  state: 'clean',
  until: 0,
  remainingMs: null,
  origin: 'clean',
  message: 'clean',
  cause: null,
  runId: 'a'.repeat(40),
  prevRunId: null,
  serverStartedAt: 0,
  createdAt: 0,
  recordedMaxTtlMs: 60_000,
  restartPending: false,
  markCleanWarning: null,
};
const healthy: HealthFacts = {
  node: 1,
  up: true,
  error: null,
  checkedAt: 0,
  rttMs: 0.3,
  clockOffsetMs: 1.5,
  version: '7.0.15',
  runId: 'a'.repeat(40),
  role: 'master',
  uptimeMs: 10_000,
  persistence: { mode: 'aof-always', aofEnabled: true, appendfsync: 'always', rdbSaves: '' },
  maxmemoryPolicy: 'noeviction',
  notifyKeyspaceEvents: '',
  configReadable: true,
  quarantine: clean,
};
const opts = { maxTtlMs: 60_000, driftFactor: 0.01, quarantineEnabled: true };

describe('safety verdict', () => {
  it('ok for an aof-always, noeviction master with a close clock', () => {
    expect(safetyVerdict(healthy, opts)).toEqual({ level: 'ok', reasons: [] });
  });

  it('persistence none: warn with the quarantine, unsafe without', () => {
    const none = { ...healthy, persistence: { mode: 'none' as const, aofEnabled: false, appendfsync: 'everysec', rdbSaves: '' } };
    const withQ = safetyVerdict(none, opts);
    expect(withQ.level).toBe('warn');
    expect(withQ.reasons[0]).toMatch(/restarts lose locks; the quarantine keeps it from voting for maxTtl \(60 s\)/);
    const withoutQ = safetyVerdict(none, { ...opts, quarantineEnabled: false });
    expect(withoutQ.level).toBe('unsafe');
    expect(withoutQ.reasons[0]).toMatch(/without quarantine/);
  });

  it('with restart detection, a crash of an rdb, everysec or fsync-no node costs maxTtl of its vote (warn); without it they are unsafe', () => {
    const p = (mode: 'aof-everysec' | 'aof-no' | 'rdb') => ({
      ...healthy,
      persistence: { ...healthy.persistence!, mode, rdbSaves: '3600 1' },
    });
    expect(safetyVerdict(p('aof-everysec'), opts)).toEqual({
      level: 'warn',
      reasons: [expect.stringMatching(/last second of locks; restart detection keeps it from voting for maxTtl \(60 s\)/)],
    });
    expect(safetyVerdict(p('aof-no'), opts).level).toBe('warn');
    const rdb = safetyVerdict(p('rdb'), opts);
    expect(rdb.level).toBe('warn');
    expect(rdb.reasons[0]).toMatch(
      /RDB snapshots only \(save "3600 1"\): a crash brings back the last snapshot; restart detection keeps it from voting for maxTtl \(60 s\) after every restart/,
    );
    const off = { ...opts, quarantineEnabled: false };
    expect(safetyVerdict(p('aof-no'), off).level).toBe('unsafe');
    expect(safetyVerdict(p('rdb'), off).level).toBe('unsafe');
  });

  it('evicting memory policies are unsafe, allkeys-* and volatile-* alike, and the lock core refuses their votes', () => {
    expect(safetyVerdict({ ...healthy, maxmemoryPolicy: 'allkeys-lru' }, opts)).toEqual({
      level: 'unsafe',
      reasons: [
        'maxmemory-policy allkeys-lru can evict held locks, the epoch sentinel or the fence register: the lock core refuses its votes (unsafe-eviction) until it is noeviction',
      ],
    });
    expect(safetyVerdict({ ...healthy, maxmemoryPolicy: 'volatile-ttl' }, opts).reasons[0]).toMatch(
      /volatile-ttl can evict held locks \(every lock key has a TTL\): the lock core refuses its votes \(unsafe-eviction\)/,
    );
    expect(refusalOf({ ...healthy, maxmemoryPolicy: 'volatile-lru' }, opts)).toMatchObject({ reason: 'unsafe-eviction' });
    expect(refusalOf({ ...healthy, maxmemoryPolicy: 'allkeys-random' }, opts)).toMatchObject({ reason: 'unsafe-eviction' });
    expect(refusalOf(healthy, opts)).toBeNull();
    expect(refusalOf({ ...healthy, maxmemoryPolicy: 'allkeys-lru' }, { ...opts, quarantineEnabled: false })).toBeNull();
  });

  it('a node recording another lease ceiling is refused (ceiling-mismatch), before its eviction policy', () => {
    const other = { ...healthy, maxmemoryPolicy: 'allkeys-lru', quarantine: { ...clean, recordedMaxTtlMs: 500 } };
    expect(refusalOf(other, opts)).toMatchObject({
      reason: 'ceiling-mismatch',
      message: expect.stringMatching(/maxTtlMs 500, this console uses 60000/),
    });
    expect(safetyVerdict(other, opts).reasons.join('\n')).toMatch(/ceiling-mismatch/);
  });

  it('a replica is unsafe; a clock beyond the drift allowance and a refused CONFIG warn', () => {
    expect(safetyVerdict({ ...healthy, role: 'slave' }, opts).level).toBe('unsafe');
    const clock = safetyVerdict({ ...healthy, clockOffsetMs: -900 }, opts);
    expect(clock.level).toBe('warn');
    expect(clock.reasons[0]).toMatch(/900 ms behind this console, more than the drift allowance \(602 ms\)/);
    expect(safetyVerdict({ ...healthy, clockOffsetMs: 500 }, opts).level).toBe('ok');
    const refused = safetyVerdict(
      { ...healthy, configReadable: false, persistence: { mode: 'aof', aofEnabled: true, appendfsync: null, rdbSaves: null } },
      opts,
    );
    expect(refused.level).toBe('warn');
    expect(refused.reasons.join(' ')).toMatch(/CONFIG is refused/);
  });

  it('puts the most serious reasons first', () => {
    const v = safetyVerdict({ ...healthy, clockOffsetMs: 5_000, maxmemoryPolicy: 'allkeys-random' }, opts);
    expect(v.level).toBe('unsafe');
    expect(v.reasons).toHaveLength(2);
    expect(v.reasons[0]).toMatch(/allkeys-random/);
  });

  it('a down node is a warning that it cannot vote', () => {
    expect(safetyVerdict({ ...healthy, up: false, error: 'ECONNREFUSED' }, opts)).toEqual({
      level: 'warn',
      reasons: [expect.stringMatching(/unreachable \(ECONNREFUSED\)/)],
    });
  });
});

describe('cluster verdict', () => {
  const node = (id: number, over: Partial<NodeHealth> = {}): NodeHealth => ({
    ...healthy,
    node: id,
    usable: true,
    refusal: null,
    verdict: { level: 'ok', reasons: [] },
    ...over,
  });
  const quarantined = (id: number, remainingMs: number, cause: QuarantineInfo['cause'] = null) =>
    node(id, {
      usable: false,
      quarantine: { ...clean, state: 'quarantined', until: 1, remainingMs, origin: 'quarantine', message: '', cause },
    });

  it('can grant with a quorum of usable nodes', () => {
    const v = clusterVerdict([node(1), node(2), node(3), node(4, { up: false, usable: false, error: 'down' }), quarantined(5, 1_000)], 5);
    expect(v).toMatchObject({ canGrant: true, usable: 3, up: 4, quorum: 3, grantableInMs: 0 });
    expect(v.reasons[0]).toBe('3 of 5 nodes usable, quorum 3: locks can be granted');
    expect(v.reasons).toContain('node 4 is down: down');
    expect(v.reasons).toContain('node 5 is quarantined for another 1.0 s');
  });

  it('cannot grant without a quorum; says when quarantines alone stand in the way', () => {
    const v = clusterVerdict([node(1), node(2), quarantined(3, 9_000), quarantined(4, 4_000), quarantined(5, 20_000)], 5);
    expect(v).toMatchObject({ canGrant: false, usable: 2, grantableInMs: 4_000 });
    const w = clusterVerdict(
      [
        node(1),
        node(2, { up: false, usable: false }),
        node(3, { usable: false, quarantine: { ...healthy.quarantine!, state: 'unknown' } }),
      ],
      3,
    );
    expect(w).toMatchObject({ canGrant: false, grantableInMs: null });
    expect(w.reasons).toContain('node 3 has no epoch sentinel: the next acquire will quarantine it for maxTtl');
  });

  it('says why a node is quarantined, and names the vote the core refuses', () => {
    const v = clusterVerdict(
      [
        node(1),
        node(2),
        quarantined(3, 4_000, 'restart'),
        quarantined(4, 2_000, 'eviction'),
        node(5, { usable: false, refusal: { reason: 'unsafe-eviction', message: 'maxmemory-policy allkeys-lru can evict held locks' } }),
      ],
      5,
    );
    expect(v.reasons).toContain('node 3 is quarantined for another 4.0 s (restart detected)');
    expect(v.reasons).toContain('node 4 is quarantined for another 2.0 s (keys evicted)');
    expect(v.reasons).toContain('node 5 votes against (unsafe-eviction): maxmemory-policy allkeys-lru can evict held locks');
    // Only quarantines end by themselves: node 5 does not count among the waits.
    expect(v).toMatchObject({ canGrant: false, grantableInMs: 2_000 });
  });

  it('counts against the configured N even when fewer nodes were checked', () => {
    const v = clusterVerdict([node(1), node(2)], 5);
    expect(v.canGrant).toBe(false);
    expect(v.reasons).toContain('only 2 of 5 configured nodes were checked');
  });
});

describe('INFO parsing', () => {
  it('reads fields and skips section headers', () => {
    const info = parseInfo('# Server\r\nredis_version:7.0.15\r\nuptime_in_seconds:12\r\n\r\n# Replication\r\nrole:master\r\n');
    expect(info.get('redis_version')).toBe('7.0.15');
    expect(info.get('role')).toBe('master');
    expect(info.has('# Server')).toBe(false);
  });
});
