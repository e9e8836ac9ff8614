import { describe, expect, it } from 'vitest';
import { GLOSSARY, glossSplit } from '@/components/scenarios/glossary';
import { createPrng, SCENARIOS } from '@/lib/scenarios';

const terms = (text: string) => glossSplit(text).flatMap((p) => (typeof p === 'string' ? [] : [[p.text, p.entry.term]]));

describe('the scenarios glossary', () => {
  it('explains the first use of each term in a text, the longer term first', () => {
    expect(terms('The validity horizon is 1.98 s; the validity is shorter. The lease ceiling and the lease ceiling.')).toEqual([
      ['validity horizon', 'validity horizon'],
      ['validity', 'validity'],
      ['lease ceiling', 'lease ceiling'],
    ]);
    expect(terms('The fenced store refuses a lower fence.')).toEqual([['fence', 'fencing token']]);
    expect(terms('The engine marks the nodes clean; node 3 is quarantined.')).toEqual([
      ['marks the nodes clean', 'mark clean'],
      ['quarantined', 'quarantine'],
    ]);
    // The text itself is kept whole.
    const text = 'A quorum (3 of 5) of TTLs, a sentinel.';
    expect(
      glossSplit(text)
        .map((p) => (typeof p === 'string' ? p : p.text))
        .join(''),
    ).toBe(text);
  });

  it('each term is defined once', () => {
    const names = GLOSSARY.map((e) => e.term);
    expect(new Set(names).size).toBe(names.length);
    for (const e of GLOSSARY) expect(e.definition.length, e.term).toBeGreaterThan(40);
  });

  it('every scenario that speaks of the lease ceiling or the validity horizon gets them explained', () => {
    for (const scenario of SCENARIOS) {
      const script = scenario.build(createPrng(1));
      for (const text of [scenario.lesson, ...script.steps.map((s) => s.say)]) {
        for (const word of ['lease ceiling', 'validity horizon']) {
          if (text.includes(word))
            expect(
              terms(text).map(([, t]) => t),
              `${scenario.id}: ${text}`,
            ).toContain(word);
        }
      }
    }
  });
});
