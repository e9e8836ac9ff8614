import { describe, expect, it } from 'vitest';
import { DEFAULT_SETTINGS, InvalidArgumentError, LIMITS, Redlock, resolveSettings } from '@redlock-console/redlock';
import { LockContendedError, LockExpiredError, QuorumUnavailableError } from '../../src/errors';
import { checkMetadata, checkResources, checkToken, checkTtl } from '../../src/validate';
import { newToken } from '../../src/token';
import { nodeLabel } from '../../src/node-label';

describe('settings', () => {
  it('has frozen, documented defaults', () => {
    expect(Object.isFrozen(DEFAULT_SETTINGS)).toBe(true);
    expect(DEFAULT_SETTINGS).toMatchObject({
      driftFactor: 0.01,
      nodeTimeoutMs: 100,
      retryCount: 10,
      retryDelayMs: 200,
      retryJitterMs: 100,
      maxTtlMs: 60_000,
      keyPrefix: 'rl:',
      quarantine: true,
      automaticExtensionThresholdMs: 500,
      maxExtensions: 100,
    });
    expect(Number.isFinite(DEFAULT_SETTINGS.maxExtensions)).toBe(true); // bounded by default
  });

  it('merges over the defaults and freezes the result', () => {
    const s = resolveSettings({ nodeTimeoutMs: 50, keyPrefix: 'x:', maxExtensions: Number.POSITIVE_INFINITY });
    expect(s.nodeTimeoutMs).toBe(50);
    expect(s.keyPrefix).toBe('x:');
    expect(s.driftFactor).toBe(0.01);
    expect(Object.isFrozen(s)).toBe(true);
  });

  it.each([
    ['driftFactor', -0.1],
    ['driftFactor', 0.5],
    ['driftFactor', Number.NaN],
    ['nodeTimeoutMs', 0],
    ['nodeTimeoutMs', 1.5],
    ['retryCount', -1],
    ['retryCount', Number.POSITIVE_INFINITY],
    ['retryDelayMs', -5],
    ['retryJitterMs', Number.NaN],
    ['maxTtlMs', 0],
    ['maxTtlMs', 100.5],
    ['keyPrefix', 7],
    ['quarantine', 'yes'],
    ['automaticExtensionThresholdMs', -1],
    ['maxExtensions', -1],
    ['maxExtensions', 2.5],
    ['maxPendingPerNode', 0],
    ['noSuchSetting', 1],
  ])('refuses %s = %s with InvalidArgumentError naming it', (key, value) => {
    const err = (() => {
      try {
        resolveSettings({ [key]: value } as never);
      } catch (e) {
        return e;
      }
      return null;
    })();
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect((err as InvalidArgumentError).argument).toBe(`settings.${key}`);
    expect((err as InvalidArgumentError).votes).toEqual([]);
  });

  it('a Redlock refuses bad nodes before connecting anywhere', () => {
    expect(() => new Redlock([])).toThrow(InvalidArgumentError);
    expect(() => new Redlock(['http://x:1'])).toThrow(/redis:\/\//);
    expect(() => new Redlock(['not a url'])).toThrow(InvalidArgumentError);
    expect(() => new Redlock(['redis://127.0.0.1:1', 'redis://:secret@127.0.0.1:1/2'])).toThrow(/listed twice/);
    expect(() => new Redlock([42 as never])).toThrow(InvalidArgumentError);
    expect(() => new Redlock(['redis://127.0.0.1:1'], { driftFactor: 2 })).toThrow(InvalidArgumentError);
  });

  it('labels nodes host:port without credentials', () => {
    expect(nodeLabel('redis://user:secret@10.0.0.5:6380/3')).toBe('10.0.0.5:6380');
    expect(nodeLabel('rediss://example.com')).toBe('example.com:6379');
  });
});

describe('input validation', () => {
  it('resources: a name or a list of distinct, non-empty names of at most 512 bytes', () => {
    expect(checkResources('a')).toEqual(['a']);
    expect(checkResources(['a', 'b'])).toEqual(['a', 'b']);
    expect(Object.isFrozen(checkResources(['a']))).toBe(true);
    expect(checkResources('x'.repeat(512))).toHaveLength(1);
    expect(checkResources('é'.repeat(256))).toHaveLength(1); // 512 bytes
    for (const bad of [
      '',
      [],
      [''],
      ['a', 'a'],
      'x'.repeat(513),
      'é'.repeat(257),
      [1],
      null,
      5,
      Array.from({ length: LIMITS.maxResources + 1 }, (_, i) => `r${i}`),
    ]) {
      expect(() => checkResources(bad), JSON.stringify(bad)?.slice(0, 40)).toThrow(InvalidArgumentError);
    }
  });

  it('ttl: a whole number of ms in [1, maxTtlMs]', () => {
    expect(checkTtl(1, 1000)).toBe(1);
    expect(checkTtl(1000, 1000)).toBe(1000);
    for (const bad of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 1001, '10', null]) {
      expect(() => checkTtl(bad, 1000), String(bad)).toThrow(InvalidArgumentError);
    }
  });

  it('metadata: at most 16 string fields of at most 256 characters, no reserved field', () => {
    expect(checkMetadata(undefined)).toEqual([]);
    expect(checkMetadata({ purpose: 'nightly', owner: 'me' })).toEqual(['purpose', 'nightly', 'owner', 'me']);
    const many = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v']));
    for (const bad of [many, { k: 'x'.repeat(257) }, { k: 5 }, { fence: '1' }, { acquiredAt: '1' }, { '': 'v' }, 'str', [['a', 'b']]]) {
      expect(() => checkMetadata(bad), JSON.stringify(bad).slice(0, 40)).toThrow(InvalidArgumentError);
    }
  });

  it('token: a non-empty string of at most 256 characters', () => {
    expect(checkToken('abc')).toBe('abc');
    for (const bad of ['', 'x'.repeat(257), 5, null]) expect(() => checkToken(bad)).toThrow(InvalidArgumentError);
  });
});

describe('tokens and errors', () => {
  it('tokens carry 20 random bytes (27 base64url characters) and do not repeat', () => {
    const tokens = new Set(Array.from({ length: 5_000 }, newToken));
    expect(tokens.size).toBe(5_000);
    for (const t of [...tokens].slice(0, 10)) expect(t).toMatch(/^[A-Za-z0-9_-]{27}$/);
  });

  it('each error class has a literal name and carries votes', () => {
    const votes = [{ node: 1, label: 'h:1', vote: 'against', reason: 'timeout' }] as const;
    for (const [Cls, name] of [
      [LockContendedError, 'LockContendedError'],
      [QuorumUnavailableError, 'QuorumUnavailableError'],
      [LockExpiredError, 'LockExpiredError'],
    ] as const) {
      const err = new Cls('m', votes, ['r']);
      expect(err.name).toBe(name);
      expect(err.votes).toBe(votes);
      expect(err.resources).toEqual(['r']);
      expect(err).toBeInstanceOf(Error);
    }
    expect(new InvalidArgumentError('ttlMs', 'bad').name).toBe('InvalidArgumentError');
  });
});
