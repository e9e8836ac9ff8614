import { metaTextOf, tokenOf } from '../redlock/value';

/**
 * Holder metadata in the Redis layout: a lock key `<prefix>lock:<resource>` holds
 * `<token> <metadata JSON>`, the attempt's token (base64url, no space), one space, then a JSON
 * object whose values are strings (see lib/redlock/value.ts). Every key of a multi-resource lock
 * holds the same value. A value without a space is a bare token: another library's lock, or one
 * written without metadata. There is no separate metadata key: the metadata of lock key K on
 * node X is whatever follows the first space in K's value on X, so it always belongs to the token
 * it is read with.
 */

/**
 * A lock value split into its token and its metadata: the token is everything before the first
 * space, the metadata the rest parsed with parseMeta (null for a bare token or bad JSON). Never
 * throws.
 */
export function splitLockValue(value: string): { token: string; meta: Record<string, string> | null } {
  return { token: tokenOf(value), meta: parseMeta(metaTextOf(value)) };
}

/**
 * Parse metadata text defensively: anything that is not a JSON object (no metadata, bad JSON, an
 * array…) is "no metadata"; fields whose value is not a string are dropped; an object left
 * without fields is null. Never throws.
 */
export function parseMeta(text: unknown): Record<string, string> | null {
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
