import 'server-only';
import { getAuth } from '../auth';
import type { Principal } from '../auth/principal';
import { getEventHub } from '.';

const encoder = new TextEncoder();

/** A stream whose reader is this far behind is dropped (with a resync hint) instead of growing. */
export const MAX_QUEUED_BYTES = 1024 * 1024;
/** How often a stream checks that its session was not revoked by another console process. */
export const SESSION_RECHECK_MS = 5_000;
const HEARTBEAT_MS = 15_000;
/** How long a new stream waits for the hub's subscriptions before it says `connected` anyway. */
const CONNECT_WAIT_MS = 2_000;
/** Streams of one session share a re-check made this recently (a browser's tabs, a client's many streams). */
const RECHECK_SHARED_MS = 1_000;

const RESYNC = `event: resync\ndata: {"reason":"this stream fell behind; reconnect and read the current state"}\n\n`;
const SESSION_ENDED = `event: session-ended\ndata: {"reason":"signed out or expired"}\n\n`;

/** Where one stream's bytes go: the HTTP response, as the server that holds it writes it. */
export interface FeedSink {
  write(bytes: Uint8Array): void;
  /** Bytes written and not yet taken by the client (buffered in the response and its socket). */
  queued(): number;
  /** End the response, after `last` when given. Called once. */
  end(last?: string): void;
}

const rechecks = new Map<string, { at: number; valid: Promise<boolean> }>();

/** Is this session still valid? One read of the masters per session per RECHECK_SHARED_MS, whatever the number of its streams. */
function recheck(
  sessions: Awaited<ReturnType<typeof getAuth>>['sessions'],
  principal: Extract<Principal, { kind: 'session' }>,
): Promise<boolean> {
  // The monotonic clock: a wall clock stepped back must not stretch the sharing.
  const now = performance.now();
  const hit = rechecks.get(principal.sid);
  if (hit && now - hit.at < RECHECK_SHARED_MS) return hit.valid;
  const valid = sessions.stillValid(principal);
  rechecks.set(principal.sid, { at: now, valid });
  if (rechecks.size > 10_000) rechecks.delete(rechecks.keys().next().value!);
  return valid;
}

/**
 * One event stream (GET /api/events, served by node-stream.ts) fed from the process's one event
 * hub: every change (lock changes summarised past a rate: hub.ts) or, with `resource`, that lock's
 * and the nodes'. Each event is serialised once for all streams. A stream
 * - subscribes before it says `connected`;
 * - is dropped, with `event: resync`, when its reader falls more than MAX_QUEUED_BYTES behind
 *   (a slow client never makes the server hold more for it; EventSource reconnects and the page
 *   reads the current state again);
 * - ends with its session: at once when this process revokes it (logout, sign out everywhere),
 *   within SESSION_RECHECK_MS + RECHECK_SHARED_MS when another process does, and when it expires.
 *
 * Returns `close`, to call when the client went away (idempotent; the sink is not ended then).
 */
export function openEventFeed(principal: Principal, resource: string | undefined, sink: FeedSink): () => void {
  let closed = false;
  const timers: Array<ReturnType<typeof setInterval>> = [];
  const stops: Array<() => void> = [];
  const close = (last?: string | null) => {
    if (closed) return;
    closed = true;
    for (const t of timers) clearInterval(t);
    for (const stop of stops) stop();
    if (last !== null) sink.end(last);
  };
  const send = (bytes: Uint8Array) => {
    if (closed) return;
    if (sink.queued() + bytes.byteLength > MAX_QUEUED_BYTES) close(RESYNC);
    else sink.write(bytes);
  };
  const hub = getEventHub();
  stops.push(hub.subscribeEncoded(send, resource));
  // `connected` once the hub's Redis subscriptions are in place: an event after it is never lost.
  void hub.ready(CONNECT_WAIT_MS).then(() => send(encoder.encode(`retry: 2000\n: connected ${Date.now()}\n\n`)));
  timers.push(setInterval(() => send(encoder.encode(`: heartbeat ${Date.now()}\n\n`)), HEARTBEAT_MS));
  if (principal.kind === 'session') {
    timers.push(setTimeout(() => close(SESSION_ENDED), Math.max(0, principal.expiresAt - Date.now())));
    void getAuth().then(({ sessions }) => {
      if (closed) return;
      stops.push(
        sessions.onRevoked((r) => {
          if ('sid' in r ? r.sid === principal.sid : r.username === principal.username && principal.issuedAt <= r.before)
            close(SESSION_ENDED);
        }),
      );
      timers.push(
        setInterval(() => {
          void recheck(sessions, principal).then(
            (valid) => (valid ? undefined : close(SESSION_ENDED)),
            () => undefined,
          );
        }, SESSION_RECHECK_MS),
      );
    });
  }
  return () => close(null);
}
