import 'server-only';
import type { Redis } from 'ioredis';
import type { LiveEvent } from '../../api/events';

const EVENT_TYPES: Record<string, LiveEvent['type']> = {
  set: 'lock.granted',
  pexpire: 'lock.extended',
  expire: 'lock.extended',
  del: 'lock.released',
  expired: 'lock.expired',
};
/** g: generic (del, expire), $: string (set), x: expired, E: keyevent channels. */
const NEEDED_FLAGS = ['E', 'g', '$', 'x'];

export interface KeyspaceSourceOptions {
  clients: Redis[];
  keyPrefix: string;
  /** Enable notifications with CONFIG SET (only on nodes the console manages). */
  manageConfig: boolean;
  /** Events of one kind on one resource within this window are one event listing their nodes. */
  groupMs?: number;
  emit(event: LiveEvent): void;
  /** Called with the nodes on which notifications could not be enabled (they need polling). */
  onUnsupported(nodes: number[]): void;
}

/**
 * Lock changes from keyspace notifications (`__keyevent@*__:set|del|expired|pexpire`) on every
 * node, grouped per resource so a grant on five nodes is one event. Returns a stop function.
 */
export function startKeyspaceSource(options: KeyspaceSourceOptions): () => void {
  const lockPrefix = `${options.keyPrefix}lock:`;
  const groupMs = options.groupMs ?? 40;
  const pending = new Map<string, { event: LiveEvent; timer: NodeJS.Timeout }>();
  const subscribers: Redis[] = [];
  let stopped = false;

  const onMessage = (node: number) => (_pattern: string, channel: string, key: string) => {
    if (!key.startsWith(lockPrefix)) return;
    const type = EVENT_TYPES[channel.slice(channel.lastIndexOf(':') + 1)];
    if (!type) return;
    const resource = key.slice(lockPrefix.length);
    const id = `${type}\0${resource}`;
    const existing = pending.get(id);
    if (existing) {
      if (!existing.event.nodes!.includes(node)) existing.event.nodes!.push(node);
      return;
    }
    const event: LiveEvent = { type, at: Date.now(), resource, nodes: [node], source: 'notifications' };
    const timer = setTimeout(() => {
      pending.delete(id);
      event.nodes!.sort((a, b) => a - b);
      options.emit(event);
    }, groupMs);
    pending.set(id, { event, timer });
  };

  void (async () => {
    const unsupported: number[] = [];
    await Promise.all(options.clients.map(async (client, i) => {
      const node = i + 1;
      try {
        if (!(await ensureNotifications(client, options.manageConfig))) {
          unsupported.push(node);
          return;
        }
        const sub = client.duplicate({ enableOfflineQueue: true, lazyConnect: false });
        sub.on('error', () => undefined);
        if (stopped) {
          sub.disconnect();
          return;
        }
        subscribers.push(sub);
        sub.on('pmessage', onMessage(node));
        await sub.psubscribe('__keyevent@*__:set', '__keyevent@*__:del', '__keyevent@*__:expired', '__keyevent@*__:pexpire', '__keyevent@*__:expire');
      } catch {
        unsupported.push(node);
      }
    }));
    if (unsupported.length && !stopped) options.onUnsupported(unsupported.sort((a, b) => a - b));
  })();

  return () => {
    stopped = true;
    for (const { timer } of pending.values()) clearTimeout(timer);
    pending.clear();
    for (const sub of subscribers) sub.disconnect();
  };
}

/** True when the node publishes the keyevents we need (enabling them where we manage the node). */
async function ensureNotifications(client: Redis, manage: boolean): Promise<boolean> {
  const [, current = ''] = (await client.config('GET', 'notify-keyspace-events')) as [string, string];
  const has = (flags: string) => NEEDED_FLAGS.every((f) => flags.includes(f) || (f !== 'E' && flags.includes('A')));
  if (has(current)) return true;
  if (!manage) return false;
  const merged = [...new Set([...current, ...NEEDED_FLAGS])].join('');
  await client.config('SET', 'notify-keyspace-events', merged);
  return true;
}
