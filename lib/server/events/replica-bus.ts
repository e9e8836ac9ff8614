import 'server-only';
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { quorumSize } from '@redlock-console/redlock';
import { liveEventSchema, type LiveEvent } from '../../api/events';
import { consoleKeys } from '../console-keys';
import { instanceName, processKey } from '../instance';
import { logger } from '../logger';
import { onEveryMaster } from '../masters';
import { getRuntime } from '../runtime';

/**
 * The events a console publishes itself (`source: 'service'`: a force-release, a node quarantined
 * by its lock core, a scenario's node action) cross to the other consoles on the same masters: each
 * is PUBLISHed on the `<p>console:events` channel of every master, and every console with an open
 * stream subscribes to that channel on every master, keeps the first copy of each event (by id)
 * and hands it to its own hub with the console it came from (`instance`). The masters' own reports
 * (keyspace notifications, polling) need no crossing: every console reads them from the masters.
 *
 * At most once: a console that cannot reach any master misses the events published meanwhile
 * (its streams still show the masters' own changes once they answer again), as with keyspace
 * notifications.
 */
interface Envelope {
  id: string;
  /** The console's name (REDLOCK_INSTANCE), shown with the event. */
  instance: string;
  /** The process that sent it (instance.ts processKey): its own copies are dropped by it. */
  from: string;
  event: LiveEvent;
}

/** How many event ids are remembered to drop the copies from the other masters. */
const SEEN_MAX = 2_000;

/** Send one of this console's own events to the other consoles (never throws, never waits for them). */
export function broadcastEvent(event: LiveEvent): void {
  const runtime = getRuntime();
  if (runtime.clients.length === 0) return;
  const message = JSON.stringify({ id: randomUUID(), instance: instanceName(), from: processKey(), event } satisfies Envelope);
  const channel = consoleKeys().events;
  void onEveryMaster((c) => c.publish(channel, message)).then((results) => {
    if (results.every((r) => r.status === 'rejected'))
      logger().debug({ type: event.type }, 'event reached no master for the other consoles');
  });
}

/**
 * Subscribe to the other consoles' events on every master; `ready` once a majority (or every
 * master that answers) has the subscription in place. Returns the stop.
 */
export function startReplicaSource(clients: readonly Redis[], emit: (event: LiveEvent) => void, ready: () => void): () => void {
  const channel = consoleKeys().events;
  const self = processKey();
  const seen = new Set<string>();
  const needed = quorumSize(clients.length);
  let subscribed = 0;
  let settled = 0;
  let readySent = false;
  const settle = (ok: boolean) => {
    settled++;
    if (ok) subscribed++;
    if (!readySent && (subscribed >= needed || settled === clients.length)) {
      readySent = true;
      ready();
    }
  };
  if (clients.length === 0) {
    readySent = true;
    ready();
  }
  const subscribers = clients.map((client) => {
    // A connection of its own (a subscribed connection runs no other command); it queues the
    // SUBSCRIBE until it connects, and subscribes again after a reconnect.
    const sub = client.duplicate({ enableOfflineQueue: true, lazyConnect: false, maxRetriesPerRequest: null });
    sub.on('error', () => undefined);
    sub.on('message', (ch: string, message: string) => {
      if (ch !== channel) return;
      const envelope = parse(message);
      if (!envelope || envelope.from === self || seen.has(envelope.id)) return;
      seen.add(envelope.id);
      if (seen.size > SEEN_MAX) seen.delete(seen.values().next().value!);
      emit({ ...envelope.event, instance: envelope.instance });
    });
    let timer: ReturnType<typeof setTimeout> | undefined;
    void Promise.race([
      sub.subscribe(channel).then(() => true),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), 2_000))),
    ])
      .catch(() => false)
      .then((ok) => {
        clearTimeout(timer);
        settle(ok);
      });
    return sub;
  });
  return () => {
    for (const sub of subscribers) sub.disconnect();
  };
}

function parse(message: string): Envelope | null {
  try {
    const raw = JSON.parse(message) as Partial<Envelope>;
    const event = liveEventSchema.safeParse(raw.event);
    if (typeof raw.id !== 'string' || typeof raw.instance !== 'string' || typeof raw.from !== 'string' || !event.success) return null;
    return { id: raw.id, instance: raw.instance.slice(0, 64), from: raw.from, event: event.data };
  } catch {
    return null;
  }
}
