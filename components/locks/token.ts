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
 * Token hues: twelve, 24° apart, from orange-yellow (50°) round to magenta (314°). The reds
 * (roughly 330°–40°) are left out: red means broken on this console, and a token is not. Two
 * tokens are either the same colour or visibly different ones, never "almost the same".
 */
export const TOKEN_HUES: readonly number[] = Array.from({ length: 12 }, (_, i) => 50 + i * 24);

/** The token's hue in degrees, the same on every screen and every reload. */
export function tokenHue(token: string): number {
  return TOKEN_HUES[fnv1a(token) % TOKEN_HUES.length]!;
}

/**
 * The hues of one lock's tokens, all different (up to twelve): each token keeps its own hue unless
 * a token before it (in sorted order) has it, then takes the next free one. Twelve hues alone give
 * two random tokens the same colour one time in twelve, and a split lock is exactly where telling
 * its tokens apart matters. The same tokens give the same answer in any order, on every screen.
 */
export function lockHues(tokens: Iterable<string>): Map<string, number> {
  const out = new Map<string, number>();
  const used = new Set<number>();
  for (const token of [...new Set(tokens)].sort()) {
    let slot = fnv1a(token) % TOKEN_HUES.length;
    for (let i = 0; i < TOKEN_HUES.length && used.has(slot); i++) slot = (slot + 1) % TOKEN_HUES.length;
    used.add(slot);
    out.set(token, TOKEN_HUES[slot]!);
  }
  return out;
}

/** Characters kept at each end of a short token when nothing else is shown beside it. */
const SHORT_END = 3;

/** `head…tail` with `n` characters at each end, or the whole token when that is no shorter. */
function cut(token: string, n: number): string {
  return token.length <= 2 * n + 1 ? token : `${token.slice(0, n)}…${token.slice(-n)}`;
}

/**
 * The short form of a token: its first and last characters (`tok…a9F`). Alone, three at each end;
 * with `peers` (the tokens shown beside it: one lock's tokens), the fewest characters at each end
 * that tell every one of them apart, so three tokens that share a beginning ("tokSplit…") never
 * read the same. Every chip shows this form; its title and tooltip carry the whole token.
 */
export function shortToken(token: string, peers: Iterable<string> = []): string {
  return distinctShortTokens([token, ...peers]).get(token)!;
}

/** The short forms of tokens shown together, each unique among them (see shortToken). */
export function distinctShortTokens(tokens: Iterable<string>): Map<string, string> {
  const unique = [...new Set(tokens)];
  const longest = unique.reduce((m, t) => Math.max(m, t.length), 0);
  for (let n = SHORT_END; ; n++) {
    const forms = unique.map((t) => cut(t, n));
    // Whole tokens are distinct, so n ≥ half the longest always ends the loop.
    if (new Set(forms).size === unique.length || 2 * n + 1 >= longest) {
      return new Map(unique.map((t, i) => [t, forms[i]!]));
    }
  }
}

/** CSS custom property carrying the hue, for the token styles in the CSS modules (`hue`: from lockHues). */
export function hueStyle(token: string, hue = tokenHue(token)): Record<string, string> {
  return { '--token-hue': String(hue) };
}
