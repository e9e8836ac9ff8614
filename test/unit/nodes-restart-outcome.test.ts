import { describe, expect, it } from 'vitest';
import { PERSISTENCE_CHOICES, restartOutcome } from '@/components/nodes/restart-outcome';

const up = (persistence: string) => ({ persistence, process: 'up' as const, resumable: null });
const down = (persistence: string, resumable: string | null = null) => ({ persistence, process: 'down' as const, resumable });

describe('what the restart dialog says a start or restart brings back', () => {
  it('offers rdb (Redis default) with an honest hint', () => {
    expect(PERSISTENCE_CHOICES.map((c) => c.value)).toEqual(['none', 'rdb', 'aof-everysec', 'aof-always']);
    expect(PERSISTENCE_CHOICES.find((c) => c.value === 'rdb')).toMatchObject({
      label: 'RDB (Redis default)',
      hint: 'a crash brings back the last snapshot: the node sits out maxTtlMs',
    });
  });

  it('a graceful restart with the same persistence is adopted: it votes at once', () => {
    for (const mode of ['rdb', 'aof-everysec', 'aof-always'] as const) {
      expect(restartOutcome(up(mode), 'restart', mode, 60_000)).toMatchObject({
        adopted: true,
        keys: 'kept',
        tone: 'ok',
        title: 'Its keys come back, and it votes at once',
      });
    }
    expect(restartOutcome(up('rdb'), 'restart', 'rdb', 60_000).text).toMatch(/SHUTDOWN \(a final SAVE\)/);
    // A node stopped gracefully earlier, started with the same persistence.
    expect(restartOutcome(down('aof-always', 'aof-always'), 'start', 'aof-always', 60_000).adopted).toBe(true);
  });

  it('aof-always after running with none loads the AOF written before, and sits out maxTtl as a restart', () => {
    const o = restartOutcome(up('none'), 'restart', 'aof-always', 60_000);
    expect(o).toMatchObject({ adopted: false, keys: 'older', tone: 'warn', title: 'It sits out the lease ceiling (60 s) as a restart' });
    expect(o.text).toMatch(
      /^It loads the AOF it wrote the last time it ran with one, if there is one: keys from before it ran with none come back \(locks released since can reappear\)/,
    );
    expect(o.text).toMatch(
      /It ran without persistence, so nothing vouches for what it loads: the lock core sees a new redis-server process and quarantines it \(restart detected\) for the lease ceiling \(60 s\)/,
    );
  });

  it('a crash is never vouched for, and a persistence change is not adopted', () => {
    const crashed = restartOutcome(down('aof-everysec'), 'start', 'aof-everysec', 5_000);
    expect(crashed).toMatchObject({ adopted: false, keys: 'kept', title: 'It sits out the lease ceiling (5 s) as a restart' });
    expect(crashed.text).toMatch(
      /less up to the last second before the crash\. It was not stopped gracefully, and a crash is never vouched for/,
    );
    expect(restartOutcome(down('rdb'), 'start', 'rdb', 5_000)).toMatchObject({ adopted: false, keys: 'older' });
    const changed = restartOutcome(up('aof-always'), 'restart', 'rdb', 60_000);
    expect(changed).toMatchObject({ adopted: false, keys: 'older' });
    expect(changed.text).toMatch(/The persistence changes \(AOF always → RDB snapshots\), so the supervisor does not vouch for it/);
  });

  it('none comes back empty', () => {
    expect(restartOutcome(up('aof-always'), 'restart', 'none', 60_000)).toMatchObject({
      adopted: false,
      keys: 'lost',
      title: 'It comes back empty',
    });
  });
});
