/**
 * Which of a script's Lua mutants a run tests: `--lines 1-80 --lines 128-300` (lua-mutants.ts)
 * keeps the mutants on those lines, so a long script can be measured in parts (probe.lua: 263
 * mutants, more than an hour on this machine). No range: every mutant.
 */

export interface LineRange {
  readonly from: number;
  readonly to: number;
}

/** `12-40` or `12` (one line); anything else is refused with a message saying what was given. */
export function parseLineRange(spec: string): LineRange {
  const m = /^(\d+)(?:-(\d+))?$/.exec(spec.trim());
  if (!m) throw new Error(`--lines wants FROM-TO or a line number (e.g. 1-80), not '${spec}'`);
  const from = Number(m[1]);
  const to = m[2] === undefined ? from : Number(m[2]);
  if (from < 1 || to < from) throw new Error(`--lines ${spec}: lines start at 1 and FROM must not be above TO`);
  return { from, to };
}

/** True when no range is given or the line is in one of them. */
export function inRanges(line: number, ranges: readonly LineRange[]): boolean {
  return ranges.length === 0 || ranges.some((r) => line >= r.from && line <= r.to);
}
