/**
 * The console's colours, named for what they mean. The values live in app/globals.css (one per
 * theme); every screen and chart takes them from here, never a `var(--…)` of its own choosing.
 *
 * - `ok` green: works, held, votes. `warn` amber: about to go wrong, needs a look.
 *   `info` blue: worth knowing, not wrong. `bad` red: broken or unsafe, and nothing else.
 * - Tokens are not judgements: their hues (components/locks/token.ts) stay out of the reds.
 */
export type Tone = 'ok' | 'warn' | 'info' | 'bad';

export const TONES: readonly Tone[] = ['ok', 'warn', 'info', 'bad'];

/** The CSS colour of a tone, for inline styles and chart series. */
export function toneColor(tone: Tone): string {
  return `var(--${tone})`;
}

/** Series colours for per-node charts: eight distinct hues, cycled by node id. */
export function nodeSeriesColor(nodeId: number): string {
  return `var(--s${((nodeId - 1) % 8) + 1})`;
}
