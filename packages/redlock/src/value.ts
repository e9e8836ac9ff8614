/**
 * A lock key's value: `<token> <metadata>`, the attempt's random token, one space, then the
 * holder metadata as a JSON object of strings (owner, host, pid, ttlMs, extensions, acquiredAt,
 * fence, and the caller's fields). A value without a space is a bare token (another library's
 * lock, or a lock written without metadata).
 *
 * One key per lock, not a lock key plus a metadata key: the grant is one SET NX GET, a release
 * one DEL, a contender learns who holds the lock from the same reply, and an inspection reads
 * everything with one GET per key. Tokens are base64url (no space), so the first space always
 * ends the token.
 *
 * Ownership is the token alone: the scripts compare `value == token` or `value` starts with
 * `token .. ' '` (see scripts/*.lua), so rewriting the metadata (extend counts extensions, the
 * fence round records the fence) never changes who holds the key.
 *
 * The rewrites write in place (SETRANGE from offset 0: extend.lua says why) and pad a shorter
 * metadata with spaces to the old length, which JSON allows after the object: a value may end in
 * spaces, which metaTextOf leaves out.
 */

/** The value an attempt writes: `<token> <metaJson>` (the bare token when there is no metadata). */
export function lockValue(token: string, metaJson: string): string {
  return metaJson === '' ? token : `${token} ${metaJson}`;
}

/** The token of a lock value: everything before the first space. */
export function tokenOf(value: string): string {
  const space = value.indexOf(' ');
  return space < 0 ? value : value.slice(0, space);
}

/**
 * The metadata text of a lock value (after the first space, without the spaces the rewrites pad it
 * with), or null when there is none.
 */
export function metaTextOf(value: string): string | null {
  const space = value.indexOf(' ');
  return space < 0 ? null : value.slice(space + 1).trimEnd();
}

/**
 * The holder metadata of a lock value as an object of strings, or null when there is none or it
 * is not a JSON object (a bare token, another library's value, bad JSON). Fields whose value is
 * not a string are dropped. Never throws.
 */
export function parseMetaText(text: unknown): Record<string, string> | null {
  if (typeof text !== 'string' || text.length < 2 || text.charCodeAt(0) !== 123 /* { */) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return null;
  // JSON.parse makes every field an own property (even `__proto__`), so deleting is safe.
  const record = parsed as Record<string, unknown>;
  let fields = 0;
  for (const field in record) {
    if (typeof record[field] === 'string') fields++;
    else delete record[field];
  }
  return fields > 0 ? (record as Record<string, string>) : null;
}
