import { metaTextOf, parseMetaText, tokenOf } from '@redlock-console/redlock';

/**
 * Holder metadata in the Redis layout: a lock key `<prefix>lock:<resource>` holds
 * `<token> <metadata JSON>`, the attempt's token (base64url, no space), one space, then a JSON
 * object whose values are strings (see packages/redlock/src/value.ts). Every key of a multi-resource lock
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
 * without fields is null. Never throws. (The lock core's own parser: a refused acquire names its
 * holder with it.)
 */
export const parseMeta: (text: unknown) => Record<string, string> | null = parseMetaText;
