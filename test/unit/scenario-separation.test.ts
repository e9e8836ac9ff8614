import { describe, expect, it } from 'vitest';
import { loadConfig } from '@/lib/config';
import { fenceWentDown } from '@/lib/scenarios/steps';
import { endpointOf, SandboxOverlapError, sharedEndpoints } from '@/lib/scenarios/separation';

/** What keeps a scenario run off the masters that hold applications' locks, and the settings that choose its sandbox. */
describe("a run's nodes against the main masters", () => {
  it('every loopback spelling is one host; credentials and the default port do not hide an address', () => {
    expect(endpointOf('redis://:secret@127.0.0.1:6381')).toBe('loopback:6381');
    expect(endpointOf('redis://localhost:6381')).toBe('loopback:6381');
    expect(endpointOf('redis://[::1]:6381')).toBe('loopback:6381');
    expect(endpointOf('redis://127.0.0.2:6381')).toBe('loopback:6381');
    expect(endpointOf('rediss://Redis-1.internal')).toBe('redis-1.internal:6379');
  });

  it("names each sandbox node reached at a main master's address, through its proxy or directly", () => {
    const main = ['redis://:a@127.0.0.1:6381', 'redis://:a@127.0.0.1:16382'];
    expect(
      sharedEndpoints(
        [
          { id: 1, urls: ['redis://:b@localhost:6381', 'redis://:b@127.0.0.1:40001'] },
          { id: 2, urls: ['redis://:b@127.0.0.1:40002', 'redis://:b@[::1]:16382'] },
          { id: 3, urls: ['redis://:b@127.0.0.1:40003', 'redis://:b@127.0.0.1:40013'] },
        ],
        main,
      ),
    ).toEqual([
      "sandbox node 1 is at 127.0.0.1:6381, a main master's address",
      "sandbox node 2 is at 127.0.0.1:16382, a main master's address",
    ]);
    expect(new SandboxOverlapError(['x']).message).toMatch(
      /^refused: the teaching sandbox includes masters that hold applications' locks \(x\)/,
    );
  });
});

describe('REDLOCK_SANDBOX', () => {
  it('defaults to a local sandbox with the local cluster and to none with external masters; local or off when set; anything else stops the start', () => {
    expect(loadConfig({}).sandbox).toBe('local');
    expect(loadConfig({ REDLOCK_NODES: 'redis://h1:6379,redis://h2:6379,redis://h3:6379' }).sandbox).toBe('off');
    expect(loadConfig({ REDLOCK_NODES: 'redis://h1:6379,redis://h2:6379,redis://h3:6379', REDLOCK_SANDBOX: 'local' }).sandbox).toBe(
      'local',
    );
    expect(loadConfig({ REDLOCK_SANDBOX: 'off' }).sandbox).toBe('off');
    expect(() => loadConfig({ REDLOCK_SANDBOX: 'main' })).toThrow('REDLOCK_SANDBOX must be local or off, got "main"');
    expect(loadConfig({ REDLOCK_SANDBOX_PORT_BASE: '41000' }).sandboxPortBase).toBe(41_000);
    expect(() => loadConfig({ REDLOCK_SANDBOX_PORT_BASE: '65530' })).toThrow('REDLOCK_SANDBOX_PORT_BASE must be between 1 and 65526');
  });
});

describe('the narration says when a fence went down', () => {
  const record = (beliefs: Array<{ client: string; resource: string; fence: number | null }>) =>
    ({ record: { beliefs } }) as unknown as Parameters<typeof fenceWentDown>[0];

  it("names both fences whole when a grant's fence is below the last other holder's, or the same number", () => {
    const ctx = record([{ client: 'A', resource: 'ledger', fence: 1795624000008000 }]);
    expect(fenceWentDown(ctx, 'B', 'ledger', 1795624000004001)).toBe(
      "B's fence 1795624000004001 is below A's 1795624000008000, granted earlier: the fence went down, so a store that checks fences would take A's writes over B's.",
    );
    expect(fenceWentDown(ctx, 'B', 'ledger', 1795624000008000)).toMatch(/^B's fence 1795624000008000 is the same number A was granted/);
    expect(fenceWentDown(ctx, 'B', 'ledger', 1795624000012001)).toBeNull();
    expect(fenceWentDown(ctx, 'B', 'other', 1)).toBeNull();
    expect(fenceWentDown(ctx, 'A', 'ledger', 1)).toBeNull();
    expect(fenceWentDown(ctx, 'B', 'ledger', null)).toBeNull();
  });
});
