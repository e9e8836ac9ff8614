import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// The code says why in its own words: a comment or a test title that cites an issue number points
// at a tracker the repository does not contain, and the reader learns nothing. Every tracked source
// file is read (the files git knows, so a new one is covered the day it is added).
const CITATION = /\b[Ii]ssues? #?\d+|\(#\d+\)/;
const SOURCES = /\.(ts|tsx|mts|mjs|js|lua|css|sh|ya?ml)$/;

function citations(text: string): string[] {
  return text.split('\n').flatMap((line, i) => (CITATION.test(line) ? [`${i + 1}: ${line.trim()}`] : []));
}

describe('no comment or test title cites an issue number', () => {
  it('the pattern finds the forms the tree used to have', () => {
    // Built here rather than written out, so that this file does not hold the forms it looks for.
    const word = 'issue';
    const cap = word[0]!.toUpperCase() + word.slice(1);
    for (const line of [
      ` * ${cap} 38, finding 2: a flood`,
      `// (${word} 40: clicks added up)`,
      `it('x (${word}s 16 and 17)'`,
      '(' + '#12)',
    ]) {
      expect(citations(line), line).toHaveLength(1);
    }
    expect(citations('const tissue = 3; // 40 issues of the magazine')).toEqual([]);
  });

  it('no tracked source file has one', () => {
    const files = execFileSync('git', ['ls-files'], { encoding: 'utf8' })
      .split('\n')
      .filter((f) => SOURCES.test(f) && !f.includes('/dist/') && true);
    expect(files.length).toBeGreaterThan(100);
    const found = files.flatMap((f) => citations(readFileSync(f, 'utf8')).map((c) => `${f}:${c}`));
    expect(found).toEqual([]);
  });
});
