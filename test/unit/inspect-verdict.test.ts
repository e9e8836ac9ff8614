import { describe, expect, it } from 'vitest';
import { clusterVerdict, parseInfo, safetyVerdict, type HealthFacts, type NodeHealth } from '@/lib/inspect';

const healthy: HealthFacts = {
  node: 1, up: true, error: null, checkedAt: 0, rttMs: 0.3, clockOffsetMs: 1.5, version: '7.0.15', role: 'master', uptimeMs: 10_000,
  persistence: { mode: 'aof-always', aofEnabled: true, appendfsync: 'always', rdbSaves: '' },
  maxmemoryPolicy: 'noeviction', notifyKeyspaceEvents: '', configReadable: true,
  quarantine: { state: 'clean', until: 0, remainingMs: null, origin: 'clean', message: 'clean' },
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

  it('aof everysec warns, appendfsync no and RDB-only are unsafe', () => {
    const p = (mode: 'aof-everysec' | 'aof-no' | 'rdb') => ({ ...healthy, persistence: { ...healthy.persistence!, mode, rdbSaves: '3600 1' } });
    expect(safetyVerdict(p('aof-everysec'), opts)).toEqual({ level: 'warn', reasons: [expect.stringMatching(/last second of locks, which the quarantine cannot detect/)] });
    expect(safetyVerdict(p('aof-no'), opts).level).toBe('unsafe');
    expect(safetyVerdict(p('rdb'), opts).reasons[0]).toMatch(/RDB snapshots only \(save "3600 1"\)/);
  });

  it('evicting memory policies are unsafe, allkeys-* and volatile-* alike', () => {
    expect(safetyVerdict({ ...healthy, maxmemoryPolicy: 'allkeys-lru' }, opts)).toEqual({ level: 'unsafe', reasons: ['maxmemory-policy allkeys-lru: allkeys-lru can evict held locks'] });
    expect(safetyVerdict({ ...healthy, maxmemoryPolicy: 'volatile-ttl' }, opts).reasons[0]).toMatch(/volatile-ttl can evict held locks, since every lock key has a TTL/);
  });

  it('a replica is unsafe; a clock beyond the drift allowance and a refused CONFIG warn', () => {
    expect(safetyVerdict({ ...healthy, role: 'slave' }, opts).level).toBe('unsafe');
    const clock = safetyVerdict({ ...healthy, clockOffsetMs: -900 }, opts);
    expect(clock.level).toBe('warn');
    expect(clock.reasons[0]).toMatch(/900 ms behind this console, more than the drift allowance \(602 ms\)/);
    expect(safetyVerdict({ ...healthy, clockOffsetMs: 500 }, opts).level).toBe('ok');
    const refused = safetyVerdict({ ...healthy, configReadable: false, persistence: { mode: 'aof', aofEnabled: true, appendfsync: null, rdbSaves: null } }, opts);
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
    expect(safetyVerdict({ ...healthy, up: false, error: 'ECONNREFUSED' }, opts)).toEqual({ level: 'warn', reasons: [expect.stringMatching(/unreachable \(ECONNREFUSED\)/)] });
  });
});

describe('cluster verdict', () => {
  const node = (id: number, over: Partial<NodeHealth> = {}): NodeHealth =>
    ({ ...healthy, node: id, usable: true, verdict: { level: 'ok', reasons: [] }, ...over });
  const quarantined = (id: number, remainingMs: number) => node(id, { usable: false,
    quarantine: { state: 'quarantined', until: 1, remainingMs, origin: 'quarantine', message: '' } });

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
    const w = clusterVerdict([node(1), node(2, { up: false, usable: false }), node(3, { usable: false, quarantine: { ...healthy.quarantine!, state: 'unknown' } })], 3);
    expect(w).toMatchObject({ canGrant: false, grantableInMs: null });
    expect(w.reasons).toContain('node 3 has no epoch sentinel: the next acquire will quarantine it for maxTtl');
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
