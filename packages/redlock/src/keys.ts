/**
 * The lock core's key layout: every key and channel it reads or writes on a node, built here and
 * nowhere else (the console, the inspector, the scenarios, the bench and the chaos harness import
 * these). Under a deployment's `keyPrefix`:
 *
 * | key | type | what |
 * |---|---|---|
 * | `<prefix>lock:<resource>` | string, PX ttl | a lock: `<token> <metadata JSON>` (value.ts) |
 * | `<prefix>sem:<resource>:<slot>` | string, PX ttl | slot `<slot>` (0 ≤ slot < limit) of the semaphore `<resource>`: a lock's value, its metadata with the holder's `limit` (semaphore.ts) |
 * | `<prefix>rw:<resource>:<slot>` | string, PX ttl | reader slot `<slot>` (0 ≤ slot < maxReaders) of the read-write lock `<resource>`: a lock's value, held by one reader or, all of them at once, by the writer (rwlock.ts) |
 * | `<prefix>rw:<resource>:intent` | string, PX ttl | a waiting writer's intent: a lock's value; new readers wait while it is on a quorum (rwlock.ts) |
 * | `<prefix>epoch` | hash, no ttl | the epoch sentinel and the fence register (epoch.ts) |
 * | `<prefix>fence` | string | the fence register of older versions, folded into the hash by a check |
 * | `<prefix>anchor` | string `1`, no ttl | created once by a check, never written again: the key the core WATCHes (grant-group.ts) |
 * | `<prefix>released` | pub/sub channel | a release's resource name, for waiters (waiters.ts) |
 *
 * Resource names are any well-formed string (validate.ts), so a lock key is the lock prefix and
 * the name, nothing escaped: a key that starts with the lock prefix names exactly one resource.
 *
 * A semaphore's slots live in a namespace of their own, `<prefix>sem:`, which no lock key starts
 * with (`lock:` and `sem:` differ in their first character): no slot is ever a mutex, whatever the
 * names. Within it a slot key ends in `:` and the slot's decimal index, which holds no `:`; so the
 * last `:` of a slot key ends the semaphore's name, whatever that name holds (`:` included), and a
 * slot key names exactly one (semaphore, slot): two semaphores never share a slot.
 *
 * A read-write lock's keys live in a third namespace, `<prefix>rw:`, which neither a lock key nor
 * a slot key starts with (`lock:`, `sem:` and `rw:` differ in their first character). Within
 * it a key ends in `:` and either a slot's decimal index or `intent`, neither of which holds a `:`:
 * the last `:` ends the lock's name, so a key names exactly one (lock, slot) or one lock's intent,
 * and `intent` is no slot index.
 */

const LOCK_NAMESPACE = 'lock:';
const SEMAPHORE_NAMESPACE = 'sem:';
const RW_NAMESPACE = 'rw:';
/** The last part of a read-write lock's intent key (a slot's is its decimal index). */
const RW_INTENT = 'intent';

/** `<prefix>lock:`: every lock key starts with it. */
export function lockKeyPrefix(keyPrefix: string): string {
  return keyPrefix + LOCK_NAMESPACE;
}

/** `<prefix>lock:<resource>`. */
export function lockKey(keyPrefix: string, resource: string): string {
  return keyPrefix + LOCK_NAMESPACE + resource;
}

/** `<prefix>lock:<resource>` for each resource, in order. */
export function lockKeysOf(keyPrefix: string, resources: readonly string[]): string[] {
  const head = keyPrefix + LOCK_NAMESPACE;
  const keys = new Array<string>(resources.length);
  for (let i = 0; i < resources.length; i++) keys[i] = head + resources[i]!;
  return keys;
}

/** The SCAN MATCH glob of the lock keys whose resource starts with `resourcePrefix` (all by default; glob characters escaped). */
export function lockPattern(keyPrefix: string, resourcePrefix = ''): string {
  return `${escapeGlob(keyPrefix + LOCK_NAMESPACE)}${escapeGlob(resourcePrefix)}*`;
}

/** The resource a lock key names, or null when `key` is not a lock key of this prefix. */
export function resourceOf(keyPrefix: string, key: string): string | null {
  const head = keyPrefix + LOCK_NAMESPACE;
  return key.startsWith(head) ? key.slice(head.length) : null;
}

/** `<prefix>sem:`: every semaphore slot key starts with it (and no lock key does). */
export function semaphoreKeyPrefix(keyPrefix: string): string {
  return keyPrefix + SEMAPHORE_NAMESPACE;
}

/**
 * `sem:<resource>:<slot>`: the name of a semaphore's slot where the core names a lock (a permit's
 * `resources`, its events and errors, and the release channel's messages). The slot key is the
 * key prefix and this name.
 */
export function semaphoreSlotName(resource: string, slot: number): string {
  return `${SEMAPHORE_NAMESPACE}${resource}:${slot}`;
}

/** `<prefix>sem:<resource>:<slot>`. */
export function semaphoreSlotKey(keyPrefix: string, resource: string, slot: number): string {
  return `${keyPrefix}${SEMAPHORE_NAMESPACE}${resource}:${slot}`;
}

/** The SCAN MATCH glob of every semaphore slot key of this prefix. */
export function semaphorePattern(keyPrefix: string): string {
  return `${escapeGlob(keyPrefix + SEMAPHORE_NAMESPACE)}*`;
}

/** The semaphore and slot a slot key names, or null when `key` is not a slot key of this prefix. */
export function semaphoreSlotOf(keyPrefix: string, key: string): { resource: string; slot: number } | null {
  const head = keyPrefix + SEMAPHORE_NAMESPACE;
  if (!key.startsWith(head)) return null;
  const colon = key.lastIndexOf(':');
  const digits = key.slice(colon + 1);
  if (colon <= head.length || !/^(0|[1-9][0-9]{0,8})$/.test(digits)) return null;
  return { resource: key.slice(head.length, colon), slot: Number(digits) };
}

/** `<prefix>rw:`: every key of a read-write lock starts with it (and no lock or slot key does). */
export function rwKeyPrefix(keyPrefix: string): string {
  return keyPrefix + RW_NAMESPACE;
}

/**
 * `rw:<resource>:<slot>`: the name of a read-write lock's reader slot where the core names a lock
 * (a read or write lock's `resources`, its events and errors, the release channel's messages).
 * The slot key is the key prefix and this name.
 */
export function rwSlotName(resource: string, slot: number): string {
  return `${RW_NAMESPACE}${resource}:${slot}`;
}

/** `<prefix>rw:<resource>:<slot>`. */
export function rwSlotKey(keyPrefix: string, resource: string, slot: number): string {
  return keyPrefix + rwSlotName(resource, slot);
}

/** `rw:<resource>:intent`: the name of a read-write lock's writer intent (its key is the key prefix and this name). */
export function rwIntentName(resource: string): string {
  return `${RW_NAMESPACE}${resource}:${RW_INTENT}`;
}

/** `<prefix>rw:<resource>:intent`. */
export function rwIntentKey(keyPrefix: string, resource: string): string {
  return keyPrefix + rwIntentName(resource);
}

/** The SCAN MATCH glob of every read-write lock key of this prefix. */
export function rwPattern(keyPrefix: string): string {
  return `${escapeGlob(keyPrefix + RW_NAMESPACE)}*`;
}

/**
 * The read-write lock a key belongs to and what it is (a reader slot, or the intent: `slot` null),
 * or null when `key` is not a read-write lock key of this prefix.
 */
export function rwKeyOf(keyPrefix: string, key: string): { resource: string; slot: number | null } | null {
  const head = keyPrefix + RW_NAMESPACE;
  if (!key.startsWith(head)) return null;
  const colon = key.lastIndexOf(':');
  const last = key.slice(colon + 1);
  if (colon <= head.length) return null;
  if (last === RW_INTENT) return { resource: key.slice(head.length, colon), slot: null };
  if (!/^(0|[1-9][0-9]{0,8})$/.test(last)) return null;
  return { resource: key.slice(head.length, colon), slot: Number(last) };
}

/** `<prefix>epoch`: the epoch sentinel hash (the fence register is one of its fields). */
export function epochKey(keyPrefix: string): string {
  return `${keyPrefix}epoch`;
}

/**
 * Where the fence register lived before it moved into the sentinel hash (`<prefix>fence`, a
 * string). The first check of a node folds it into the hash with max and deletes it; nothing
 * writes it any more.
 */
export function legacyFenceKey(keyPrefix: string): string {
  return `${keyPrefix}fence`;
}

/**
 * `<prefix>anchor`: created by a check (scripts/probe.lua) and never written again. The lock core
 * WATCHes it on its own connections, so that whatever replaces the node's data in place (a sync,
 * DEBUG RELOAD, SWAPDB, FLUSHALL, a RESTORE of it, its eviction) aborts the next fast probe.
 */
export function anchorKey(keyPrefix: string): string {
  return `${keyPrefix}anchor`;
}

/** `<prefix>released`: the channel a release publishes its resource names on. */
export function releaseChannel(keyPrefix: string): string {
  return `${keyPrefix}released`;
}

/** Escape Redis glob characters (`*?[]\`) so a literal string matches only itself. */
export function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}
