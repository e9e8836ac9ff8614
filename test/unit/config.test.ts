import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, parseNodeUrls, redact } from '../../lib/config';

describe('REDLOCK_NODES', () => {
  it('accepts redis:// and rediss:// URLs with user, password and db', () => {
    const nodes = parseNodeUrls(' redis://:s3cret@10.0.0.5:6380/2 , rediss://user:pw@cache.example:6379,redis://10.0.0.7 ');
    expect(nodes.map((n) => [n.label, n.tls])).toEqual([
      ['10.0.0.5:6380', false],
      ['cache.example:6379', true],
      ['10.0.0.7:6379', false],
    ]);
    expect(nodes[0]!.url).toBe('redis://:s3cret@10.0.0.5:6380/2');
  });

  it.each([
    ['', /is empty/],
    ['http://10.0.0.5:6379', /must start with redis:\/\/ or rediss:\/\//],
    ['10.0.0.5:6379', /must start with redis|is not a URL/],
    ['redis://a:6379,redis://a:6379', /repeats a:6379/],
    ['redis://a:99999', /not a URL|bad port/],
    ['redis://a:6379/x', /database number \(0-15\)/],
    // The lock core's rule, not a looser one of the config (it would fail every lock route later).
    ['redis://a:6379/16', /database number \(0-15\)/],
    ['redis://a:6379?family=6', /takes no query or fragment/],
    ['redis://a:6379#frag', /takes no query or fragment/],
    ['not a url', /is not a URL/],
  ])('rejects %j with one clear line', (value, message) => {
    let error: unknown;
    try {
      parseNodeUrls(value);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain('\n');
  });

  it('never shows a password in an error', () => {
    expect(() => parseNodeUrls('http://:hunter2hunter2@a:1')).toThrow(/\*\*\*/);
    expect(() => parseNodeUrls('http://:hunter2hunter2@a:1')).not.toThrow(/hunter2/);
    expect(redact('redis://u:pw@h:1')).toBe('redis://u:***@h:1');
  });

  it('either parses or throws ConfigError for any string (never another error)', () => {
    fc.assert(
      fc.property(fc.string(), (s) => {
        try {
          parseNodeUrls(s);
        } catch (err) {
          expect(err).toBeInstanceOf(ConfigError);
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('loadConfig', () => {
  it('has documented defaults', () => {
    const c = loadConfig({}, '/srv/app');
    expect(c).toMatchObject({
      port: 3000,
      host: '127.0.0.1',
      dataDir: '/srv/app/.data',
      nodes: null,
      clusterSize: 5,
      portBase: 6381,
      serverPortBase: 16381,
      persistence: 'aof-always',
      keyPrefix: 'rl:',
      maxTtlMs: 60_000,
      adminUser: null,
      scenarioReadingMs: 1_100,
      nodeTimeoutMs: 100,
    });
    expect(loadConfig({ REDLOCK_NODE_TIMEOUT_MS: '750' }).nodeTimeoutMs).toBe(750);
  });

  it('REDLOCK_SCENARIO_READING_MS sets the pause between scenario steps, 0 included', () => {
    expect(loadConfig({ REDLOCK_SCENARIO_READING_MS: '0' }).scenarioReadingMs).toBe(0);
    expect(loadConfig({ REDLOCK_SCENARIO_READING_MS: '2500' }).scenarioReadingMs).toBe(2_500);
  });

  it.each([
    [{ PORT: 'abc' }, /PORT must be a whole number/],
    [{ PORT: '70000' }, /PORT must be between/],
    [{ REDLOCK_PERSISTENCE: 'aof' }, /REDLOCK_PERSISTENCE must be none, rdb, aof-everysec or aof-always/],
    [{ REDLOCK_CLUSTER_SIZE: '0' }, /REDLOCK_CLUSTER_SIZE must be between 1 and 15/],
    [{ REDLOCK_ADMIN_USER: 'root' }, /set both REDLOCK_ADMIN_USER and REDLOCK_ADMIN_PASSWORD/],
    [{ REDLOCK_ADMIN_USER: 'root', REDLOCK_ADMIN_PASSWORD: 'short' }, /at least 12 characters/],
    [{ REDLOCK_KEY_PREFIX: 'has space' }, /REDLOCK_KEY_PREFIX/],
    [{ REDLOCK_NODE_TIMEOUT_MS: '0' }, /REDLOCK_NODE_TIMEOUT_MS must be between 1 and 60000/],
    [{ REDLOCK_SCENARIO_READING_MS: '-1' }, /REDLOCK_SCENARIO_READING_MS must be a whole number/],
    [{ REDLOCK_SCENARIO_READING_MS: '60001' }, /REDLOCK_SCENARIO_READING_MS must be between 0 and 60000/],
  ])('%j → ConfigError', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });
});

describe("README's configuration table", () => {
  it('documents every variable loadConfig reads', () => {
    const source = readFileSync(new URL('../../lib/config/env.ts', import.meta.url), 'utf8');
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const read = new Set([...source.matchAll(/(?:env\.|int\(env, ')([A-Z][A-Z_]+)/g)].map((m) => m[1]!));
    expect(read.size).toBeGreaterThan(10);
    const documented = new Set([...readme.matchAll(/^\| `([A-Z][A-Z_]+)`(?:, `([A-Z][A-Z_]+)`)?/gm)].flatMap((m) => [m[1]!, m[2] ?? '']));
    expect([...read].filter((name) => !documented.has(name))).toEqual([]);
  });
});
