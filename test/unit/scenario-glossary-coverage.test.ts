import { describe, expect, it } from 'vitest';
import { GLOSSARY, glossSplit } from '@/components/scenarios/glossary';
import { createPrng, SCENARIOS, type Step } from '@/lib/scenarios';

/**
 * Jargon came before its explanation from scenario 1 on (compare-and-delete, token, fence,
 * "not awaited", the error names, the epoch sentinel), and the glossary covered part of it.
 *
 * The words a newcomer must be told, as the scenarios use them. Each must be a glossary word, and
 * in every scenario its first use must be in a text the player glosses (the lesson, a step's
 * narration, a question, an explanation, a step's result), never first on a button or a title,
 * where no definition can be shown: then it is explained before or at its first step.
 */
const JARGON: readonly string[] = [
  'compare-and-delete',
  'token',
  'fence',
  'fencing token',
  'not awaited',
  'LockContendedError',
  'QuorumUnavailableError',
  'LockExpiredError',
  'epoch sentinel',
  'sentinel',
  'quorum',
  'majority',
  'TTL',
  'validity',
  'validity horizon',
  'lease ceiling',
  'drift allowance',
  'quarantine',
  'quarantined',
  'aof-always',
  'fsync',
  'AOF',
  'snapshot',
  'contended',
  'semaphore',
  'permit',
  'slot',
];

const wordRe = (word: string) => new RegExp(`\\b${word.replace(/[-]/g, '\\-')}\\b`, 'i');

/** The glossary entry a word is explained by, or undefined. */
const entryOf = (word: string) =>
  glossSplit(word).find(
    (p): p is Exclude<ReturnType<typeof glossSplit>[number], string> =>
      typeof p !== 'string' && p.text.toLowerCase() === word.toLowerCase(),
  );

/** What a viewer reads of a run, in order: [text, glossed?, step number]. */
function readingOrder(lesson: string, steps: readonly Step[]): Array<{ text: string; glossed: boolean; step: number }> {
  const out: Array<{ text: string; glossed: boolean; step: number }> = [{ text: lesson, glossed: true, step: 0 }];
  steps.forEach((s, i) => {
    const step = i + 1;
    out.push({ text: s.title, glossed: false, step });
    out.push({ text: s.say, glossed: true, step });
    if (s.do === 'predict') {
      out.push({ text: s.question, glossed: true, step });
      for (const c of s.choices) out.push({ text: c.label, glossed: false, step });
    }
    if ('explain' in s && s.explain) for (const text of Object.values(s.explain)) out.push({ text: text as string, glossed: true, step });
  });
  return out;
}

describe('the glossary covers every word before its first use', () => {
  it('every word of the jargon list is a glossary word', () => {
    const missing = JARGON.filter((w) => !entryOf(w));
    expect(missing).toEqual([]);
    expect(GLOSSARY.length).toBeGreaterThanOrEqual(JARGON.length - 8);
  });

  it('in every scenario, each word is first met in a glossed text (explained there), never first on a button or a title', () => {
    const late: string[] = [];
    for (const scenario of SCENARIOS) {
      for (const seed of [1, 2, 3]) {
        const script = scenario.build(createPrng(seed));
        const texts = readingOrder(scenario.lesson, script.steps);
        for (const word of JARGON) {
          const first = texts.find((t) => wordRe(word).test(t.text));
          if (!first) continue;
          // Explained where its glossary entry is explained: the first use of the entry in a glossed
          // text ("majority" explains "quorum"; "fencing token" holds "token" and is its own word).
          const entry = entryOf(word)?.entry.term;
          const explains = (t: { text: string; glossed: boolean }) =>
            t.glossed &&
            glossSplit(t.text).some(
              (p) => typeof p !== 'string' && (p.entry.term === entry || (p.text.length > word.length && wordRe(word).test(p.text))),
            );
          const explained = texts.filter((t) => t.step <= first.step).some(explains);
          if (!explained)
            late.push(
              `${scenario.number} ${scenario.id} (seed ${seed}): "${word}" first at step ${first.step} in "${first.text.slice(0, 80)}"`,
            );
        }
      }
    }
    expect([...new Set(late)]).toEqual([]);
  });
});
