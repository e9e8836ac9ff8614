/** Client colours: one hue per client name, the same lightness in both themes (white text reads on all). */
const HUES: Record<string, number> = { A: 255, B: 330, C: 175, D: 295, E: 60, P: 230 };

export function clientColor(name: string): string {
  if (name === 'P') return 'oklch(0.62 0.05 230)';
  const hue = HUES[name];
  return hue === undefined ? 'oklch(0.6 0 0)' : `oklch(0.6 0.17 ${hue})`;
}

/** A lighter tint of the client colour (for fuses and backgrounds). */
export function clientTint(name: string, percent = 30): string {
  return `color-mix(in oklab, ${clientColor(name)} ${percent}%, transparent)`;
}
