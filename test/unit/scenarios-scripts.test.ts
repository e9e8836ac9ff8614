import { describe, expect, it } from 'vitest';
import { OUTCOMES, SCENARIO_IDS } from '@/lib/api/scenarios';
import { createPrng, SCENARIOS } from '@/lib/scenarios';

/**
 * The scripts are data: check them for every scenario and many seeds, so a typo in a step (an
 * unknown client or resource, a reveal of a prediction that was never asked, a ttl above the
 * run's lease ceiling) fails here, not in front of a class.
 */
describe('scenario scripts', () => {
  it('the catalog has the eight scenarios of the API, numbered 1–8 in order', () => {
    expect(SCENARIOS.map((s) => s.id)).toEqual([...SCENARIO_IDS]);
    expect(SCENARIOS.map((s) => s.number)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  for (const scenario of SCENARIOS) {
    it(`${scenario.number} ${scenario.id}: well-formed for every seed`, () => {
      for (let seed = 0; seed < 50; seed++) {
        const script = scenario.build(createPrng(seed));
        const clients = new Set(script.clients.map((c) => c.name));
        const resources = new Set(script.resources.map((r) => r.name));
        const ids = script.steps.map((s) => s.id);
        expect(new Set(ids).size, 'step ids are unique').toBe(ids.length);
        expect(script.steps[0]!.chain, 'the first step opens a beat').toBeFalsy();
        const asked = new Map<string, string[]>();
        for (const step of script.steps) {
          if ('who' in step) {
            const who = Array.isArray(step.who) ? step.who : [step.who];
            for (const name of who) expect(clients.has(name), `${step.id}: client ${name}`).toBe(true);
          }
          if ('resource' in step) expect(resources.has(step.resource), `${step.id}: resource ${step.resource}`).toBe(true);
          if ('ttlMs' in step) expect(step.ttlMs).toBeLessThanOrEqual(script.maxTtlMs);
          if ('nodes' in step) for (const n of step.nodes ?? []) expect(n).toBeGreaterThanOrEqual(1);
          if (step.do === 'compare-fences') for (const name of [step.earlier, step.later]) expect(clients.has(name), `${step.id}: client ${name}`).toBe(true);
          if (step.do === 'predict') {
            expect(step.choices.length).toBeGreaterThanOrEqual(2);
            asked.set(step.id, step.choices.map((c) => c.id));
          }
          if ('reveals' in step && step.reveals) {
            expect(asked.has(step.reveals), `${step.id} reveals ${step.reveals}, asked before`).toBe(true);
            if (step.do === 'acquire' && step.revealBy === 'granted') expect(asked.get(step.reveals)!.sort()).toEqual(['granted', 'refused']);
            else if (step.do === 'acquire' && step.revealBy !== 'overlap') {
              for (const c of asked.get(step.reveals)!) expect([...OUTCOMES, 'overlap', 'no-overlap']).toContain(c);
            }
          }
        }
        expect(script.maxTtlMs).toBeLessThanOrEqual(5_000);
      }
    });
  }

  it('the same seed builds the same script; the seed picks which nodes fail', () => {
    const restart = SCENARIOS.find((s) => s.id === 'restart-without-persistence')!;
    expect(restart.build(createPrng(7))).toEqual(restart.build(createPrng(7)));
    const crashed = new Set(Array.from({ length: 20 }, (_, seed) => JSON.stringify(restart.build(createPrng(seed)).steps.find((s) => s.id === 'off-crash'))));
    expect(crashed.size).toBeGreaterThan(1);
  });

  it('the PRNG is deterministic and uniform enough', () => {
    const a = createPrng(42);
    const b = createPrng(42);
    const xs = Array.from({ length: 1_000 }, () => a.next());
    expect(xs).toEqual(Array.from({ length: 1_000 }, () => b.next()));
    expect(Math.min(...xs)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...xs)).toBeLessThan(1);
    const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
    expect(mean).toBeGreaterThan(0.45);
    expect(mean).toBeLessThan(0.55);
    expect(a.shuffle([1, 2, 3, 4, 5]).sort()).toEqual([1, 2, 3, 4, 5]);
  });
});
