/**
 * The Lua mutation operators: no kept tool mutates Lua, so this small one does, line by
 * line, on the code part of each line (comments and string literals are never touched):
 * - comparison swaps: == ↔ ~=, < ↔ <=, > ↔ >=;
 * - arithmetic swaps: + ↔ -, * ↔ /;
 * - logical swaps: and ↔ or;
 * - integer constants ±1;
 * - a whole-line `redis.call(…)` / `redis.pcall(…)` statement removed;
 * - the condition of an `if … then` / `elseif … then` negated.
 */

export interface LuaMutant {
  /** Script file name, e.g. 'probe.lua'. */
  readonly file: string;
  /** 1-based line. */
  readonly line: number;
  readonly operator: string;
  readonly original: string;
  readonly replacement: string;
}

/** The code part of a line: up to a `--` that is outside a string literal. */
export function codeEnd(line: string): number {
  let quote: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = null;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '-' && line[i + 1] === '-') return i;
  }
  return line.length;
}

/** Offsets in `code` that are inside a string literal (never mutated). */
function stringMask(code: string): boolean[] {
  const mask: boolean[] = new Array<boolean>(code.length).fill(false);
  let quote: string | null = null;
  for (let i = 0; i < code.length; i++) {
    const c = code[i]!;
    if (quote) {
      mask[i] = true;
      if (c === '\\') {
        mask[i + 1] = true;
        i++;
      } else if (c === quote) quote = null;
    } else if (c === "'" || c === '"') {
      quote = c;
      mask[i] = true;
    }
  }
  return mask;
}

interface TokenRule {
  readonly operator: string;
  readonly pattern: RegExp;
  readonly replace: (match: string) => string | null;
}

const SWAP: Readonly<Record<string, string>> = {
  '==': '~=',
  '~=': '==',
  '<=': '<',
  '>=': '>',
  '<': '<=',
  '>': '>=',
  '+': '-',
  '-': '+',
  '*': '/',
  '/': '*',
  and: 'or',
  or: 'and',
};

const RULES: readonly TokenRule[] = [
  { operator: 'comparison', pattern: /==|~=|<=|>=|(?<![<>=~])[<>](?!=)/g, replace: (m) => SWAP[m] ?? null },
  // A binary + - * / between operands (not `--`, not a unary minus after an operator or bracket).
  { operator: 'arithmetic', pattern: /(?<=[\w)\]]\s*)[+\-*/](?=\s*[\w(])/g, replace: (m) => SWAP[m] ?? null },
  { operator: 'logical', pattern: /\b(and|or)\b/g, replace: (m) => SWAP[m] ?? null },
];

/** Every mutant of one script's source. */
export function mutantsOf(file: string, source: string): LuaMutant[] {
  const out: LuaMutant[] = [];
  const lines = source.split('\n');
  lines.forEach((text, index) => {
    const line = index + 1;
    if (text.startsWith('--@include')) return;
    const end = codeEnd(text);
    const code = text.slice(0, end);
    if (code.trim() === '') return;
    const rest = text.slice(end);
    const mask = stringMask(code);
    const at = (offset: number, length: number, by: string, operator: string) => {
      if (mask[offset]) return;
      out.push({ file, line, operator, original: text, replacement: code.slice(0, offset) + by + code.slice(offset + length) + rest });
    };
    for (const rule of RULES) {
      for (const m of code.matchAll(rule.pattern)) {
        const by = rule.replace(m[0]);
        if (by !== null) at(m.index, m[0].length, by, rule.operator);
      }
    }
    // Integer constants (not part of a name, not in a string; KEYS[i]/ARGV[i] indices too: a wrong
    // argument read is a realistic slip).
    for (const m of code.matchAll(/(?<![\w.])\d+(?![\w.])/g)) {
      const n = Number(m[0]);
      at(m.index, m[0].length, String(n + 1), 'constant+1');
      if (n > 0) at(m.index, m[0].length, String(n - 1), 'constant-1');
    }
    // A redis.call statement on a line of its own, its parentheses balanced on the line.
    const statement = /^(\s*)redis\.p?call\(.*\)\s*$/.exec(code);
    if (statement && balanced(code)) {
      out.push({ file, line, operator: 'remove-call', original: text, replacement: `${statement[1]}-- (removed) ${code.trim()}` });
    }
    const cond = /^(\s*(?:else)?if\s+)(.+?)(\s+then\b.*)$/.exec(code);
    if (cond) {
      out.push({ file, line, operator: 'negate-condition', original: text, replacement: `${cond[1]}not (${cond[2]})${cond[3]}${rest}` });
    }
  });
  return out;
}

function balanced(code: string): boolean {
  const mask = stringMask(code);
  let depth = 0;
  for (let i = 0; i < code.length; i++) {
    if (mask[i]) continue;
    if (code[i] === '(') depth++;
    else if (code[i] === ')' && --depth < 0) return false;
  }
  return depth === 0;
}

/** The source with one mutant applied. */
export function applyMutant(source: string, mutant: LuaMutant): string {
  const lines = source.split('\n');
  if (lines[mutant.line - 1] !== mutant.original) throw new Error(`${mutant.file}:${mutant.line} changed since the mutants were made`);
  lines[mutant.line - 1] = mutant.replacement;
  return lines.join('\n');
}
