/**
 * Holder metadata in the Redis layout: `<prefix>meta:<token>` is a string, a JSON object whose
 * values are strings, written by the acquire attempt whose token is `<token>`. One meta key per
 * attempt, shared by every resource of a multi-resource lock. An attempt may leave a meta key on
 * a node where its SET NX lost, so metadata is only ever read THROUGH a lock key's value: the meta
 * of lock key K on node X is `GET <prefix>meta:<value of K on X>`.
 */

/** The meta key of the attempt whose token is `token`: `<metaPrefix><token>`. */
export function metaKeyOf(metaPrefix: string, token: string): string {
  return `${metaPrefix}${token}`;
}

/**
 * Parse a meta key's value defensively: anything that is not a JSON object (missing key, an old
 * hash read as something else, bad JSON, an array…) is "no metadata"; fields whose value is not a
 * string are dropped; an object left without fields is null. Never throws.
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
