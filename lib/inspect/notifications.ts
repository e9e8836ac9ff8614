import type { Redis } from 'ioredis';

/**
 * Keyspace notifications, as the live index (lock-index.ts) and the console's live events need
 * them: keyevent channels (`E`) for generic commands (`g`: del, expire, rename…), string commands
 * (`$`: set) and expiries (`x`). `A` stands for every class but not for `E`.
 */
export const NOTIFY_FLAGS: readonly string[] = Object.freeze(['E', 'g', '$', 'x']);

/** Does a `notify-keyspace-events` value publish everything NOTIFY_FLAGS asks for? */
export function hasNotifyFlags(flags: string): boolean {
  return NOTIFY_FLAGS.every((f) => flags.includes(f) || (f !== 'E' && flags.includes('A')));
}

/** The node's `notify-keyspace-events` setting. */
export async function notifyFlags(client: Redis): Promise<string> {
  const [, current = ''] = (await client.config('GET', 'notify-keyspace-events')) as [string, string];
  return current;
}

/**
 * True when the node publishes the keyevents we need. With `manage` (nodes the console runs),
 * the missing flags are added to the node's setting; otherwise the node is left as it is.
 */
export async function ensureNotifications(client: Redis, manage: boolean): Promise<boolean> {
  const current = await notifyFlags(client);
  if (hasNotifyFlags(current)) return true;
  if (!manage) return false;
  const merged = [...new Set([...current, ...NOTIFY_FLAGS])].join('');
  await client.config('SET', 'notify-keyspace-events', merged);
  return true;
}
