/**
 * Tokens at a glance: a stable hue per token (same colour = same token, on every screen and
 * every reload) and a short form that is still unique enough to tell tokens apart by eye.
 */

/** FNV-1a over the token's UTF-16 code units: cheap, stable, well spread. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/**
 * A hue in degrees for the token. Hues are drawn from 36 steps of 10° so two tokens are either
 * the same colour or visibly different ones, never "almost the same".
 */
export function tokenHue(token: string): number {
  return (fnv1a(token) % 36) * 10;
}

/** The first characters of the token (the tail is what differs least in random tokens anyway). */
export function shortToken(token: string, length = 6): string {
  return token.length <= length ? token : token.slice(0, length);
}

/** CSS custom property carrying the hue, for the token styles in the CSS modules. */
export function hueStyle(token: string): Record<string, string> {
  return { '--token-hue': String(tokenHue(token)) };
}
