import { existsSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { control, judge, mutantKey, stageHashes, type Outcome, type Stage } from '../../scripts/mutation/lua-stages';
import { FULL_NAME, LUA_TESTS, SLOW_UNDER_LOAD, type LuaTestSet } from '../../scripts/mutation/lua-tests';

// scripts/mutation/lua-mutants.ts judges each Lua mutant in two stages (a quick subset, then the
// full list only for a survivor) and refuses to judge a script whose tests fail unmutated.

const pass: Outcome = { status: 'survived' };
const fail: Outcome = { status: 'killed', killedBy: 'some test' };

/** A fake stage runner: each stage answers from its queue (the last answer repeats), and every call is recorded. */
function runner(answers: Partial<Record<Stage, Outcome[]>>) {
  const calls: Stage[] = [];
  const run = (stage: Stage): Outcome => {
    calls.push(stage);
    const queue = answers[stage] ?? [pass];
    return queue.length > 1 ? queue.shift()! : queue[0]!;
  };
  return { run, calls };
}

describe('a Lua mutant is judged in two stages', () => {
  it('a mutant killed by the quick stage never runs the full list', () => {
    const r = runner({ quick: [fail] });
    expect(judge(r.run)).toEqual({ ...fail, stage: 'quick' });
    expect(r.calls).toEqual(['quick']);
  });

  it('a timeout in the quick stage is a kill too', () => {
    const r = runner({ quick: [{ status: 'timeout' }] });
    expect(judge(r.run)).toEqual({ status: 'timeout', stage: 'quick' });
    expect(r.calls).toEqual(['quick']);
  });

  it('a mutant that survives the quick stage runs the full list, which can still kill it', () => {
    const r = runner({ quick: [pass], full: [fail] });
    expect(judge(r.run)).toEqual({ ...fail, stage: 'full' });
    expect(r.calls).toEqual(['quick', 'full']);
  });

  it('a mutant survives only when both stages pass', () => {
    const r = runner({});
    expect(judge(r.run)).toEqual({ status: 'survived', stage: 'full' });
    expect(r.calls).toEqual(['quick', 'full']);
  });
});

describe('the control run (no mutant)', () => {
  it('passes when both stages pass, each run once', () => {
    const r = runner({});
    expect(control(r.run)).toBeNull();
    expect(r.calls).toEqual(['quick', 'full']);
  });

  it('refuses to judge the script when the full stage fails unmutated three times', () => {
    const r = runner({ full: [fail] });
    expect(control(r.run)).toEqual({ stage: 'full', outcome: fail });
    expect(r.calls).toEqual(['quick', 'full', 'full', 'full']);
  });

  it('refuses when the quick stage keeps failing, without running the full one', () => {
    const r = runner({ quick: [{ status: 'timeout' }] });
    expect(control(r.run)).toEqual({ stage: 'quick', outcome: { status: 'timeout' } });
    expect(r.calls).toEqual(['quick', 'quick', 'quick']);
  });

  it('a stage that fails once on load and then passes is accepted', () => {
    const r = runner({ quick: [fail, pass] });
    expect(control(r.run)).toBeNull();
    expect(r.calls).toEqual(['quick', 'quick', 'full']);
  });
});

describe('the cache key', () => {
  const set: LuaTestSet = { quick: ['a'], full: ['a', 'b'] };
  const files: Record<string, string> = { a: 'test a', b: 'test b' };
  const mutant = { file: 'x.lua', line: 3, replacement: 'return 1' };
  const key = (s = set, f = files) =>
    mutantKey(
      'lua',
      stageHashes(s, (t) => f[t]!),
      mutant,
    );

  it('changes with a test file of either stage, either list, or either name pattern', () => {
    const base = key();
    expect(key(set, { ...files, a: 'test a, changed' })).not.toBe(base);
    expect(key(set, { ...files, b: 'test b, changed' })).not.toBe(base);
    expect(key({ ...set, full: ['a'] })).not.toBe(base);
    expect(key({ ...set, quick: ['b'] })).not.toBe(base);
    expect(key({ ...set, quickName: 'x' })).not.toBe(base);
    expect(key({ ...set, fullName: 'x' })).not.toBe(base);
    expect(key()).toBe(base);
  });
});

describe('the Lua test lists (lua-tests.ts)', () => {
  const scripts = readdirSync('packages/redlock/src/scripts').filter((f) => f.endsWith('.lua'));

  it('name every script, quick and full, with files that exist; every quick file is in the full list', () => {
    expect(Object.keys(LUA_TESTS).sort()).toEqual([...scripts].sort());
    for (const [script, set] of Object.entries(LUA_TESTS)) {
      expect(set.quick.length, script).toBeGreaterThan(0);
      for (const t of [...set.quick, ...set.full])
        expect(existsSync(`packages/redlock/test/integration/${t}.test.ts`), `${script}: ${t}`).toBe(true);
      for (const t of set.quick) expect(set.full, `${script}: ${t}`).toContain(t);
    }
  });

  it('leave the tests that fail unmutated under load out of both stages', () => {
    const stress = 'fencing tokens many clients, one resource, hundreds of grants, aof-always nodes crashing and restarting';
    expect(SLOW_UNDER_LOAD.length).toBeGreaterThan(0);
    expect(new RegExp(FULL_NAME).test(stress)).toBe(false);
    expect(new RegExp(FULL_NAME).test('Redlock on five real masters acquire sets the token')).toBe(true);
    for (const set of Object.values(LUA_TESTS)) {
      expect(new RegExp(set.quickName ?? FULL_NAME).test(stress)).toBe(false);
      expect(new RegExp(set.fullName ?? FULL_NAME).test(stress)).toBe(false);
    }
    // probe.lua's stages leave out a core acquire test that fails unmutated under load, and keep the rest of the file.
    const probe = LUA_TESTS['probe.lua']!;
    const ttl = 'Redlock on five real masters acquire sets the token on every node with the ttl, holder metadata and a fence';
    for (const name of [probe.quickName!, probe.fullName!]) {
      expect(new RegExp(name).test(ttl)).toBe(false);
      expect(new RegExp(name).test('Redlock on five real masters contention between two clients')).toBe(true);
    }
  });
});
