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
 * GET /api/events: server-sent events from the process's one event hub, every change (lock changes
 * summarised past a rate: hub.ts) or, with `resource`, that lock's and the nodes'. Each event is
 * serialised once for all streams. A stream
 * - subscribes before it says `connected`;
 * - is dropped, with `event: resync`, when its reader falls more than MAX_QUEUED_BYTES behind
 *   (a slow client never makes the server hold more for it; EventSource reconnects and the page
 *   reads the current state again);
 * - ends with its session: at once when this process revokes it (logout, sign out everywhere),
 *   within SESSION_RECHECK_MS + RECHECK_SHARED_MS when another process does, and when it expires.
 */
export function eventStream(req: Request, principal: Principal, resource?: string): Response {
  let cleanup: () => void = () => undefined;
  const stream = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        let closed = false;
        const timers: Array<ReturnType<typeof setInterval>> = [];
        const stops: Array<() => void> = [];
        const end = (last?: string) => {
          if (closed) return;
          closed = true;
          for (const t of timers) clearInterval(t);
          for (const stop of stops) stop();
          try {
            if (last) controller.enqueue(encoder.encode(last));
            controller.close();
          } catch {
            // already closed by the client
          }
        };
        cleanup = () => end();
        const send = (bytes: Uint8Array) => {
          if (closed) return;
          if ((controller.desiredSize ?? 0) < bytes.byteLength) {
            end(`event: resync\ndata: {"reason":"this stream fell behind; reconnect and read the current state"}\n\n`);
            return;
          }
          controller.enqueue(bytes);
        };
        const hub = getEventHub();
        stops.push(hub.subscribeEncoded(send, resource));
        // `connected` once the hub's Redis subscriptions are in place: an event after it is never lost.
        void hub.ready(CONNECT_WAIT_MS).then(() => send(encoder.encode(`retry: 2000\n: connected ${Date.now()}\n\n`)));
        timers.push(setInterval(() => send(encoder.encode(`: heartbeat ${Date.now()}\n\n`)), HEARTBEAT_MS));
        if (principal.kind === 'session') {
          const ended = `event: session-ended\ndata: {"reason":"signed out or expired"}\n\n`;
          timers.push(setTimeout(() => end(ended), Math.max(0, principal.expiresAt - Date.now())));
          void getAuth().then(({ sessions }) => {
            if (closed) return;
            stops.push(
              sessions.onRevoked((r) => {
                if ('sid' in r ? r.sid === principal.sid : r.username === principal.username && principal.issuedAt <= r.before) end(ended);
              }),
            );
            timers.push(
              setInterval(() => {
                void recheck(sessions, principal).then(
                  (valid) => (valid ? undefined : end(ended)),
                  () => undefined,
                );
              }, SESSION_RECHECK_MS),
            );
          });
        }
        req.signal.addEventListener('abort', () => end(), { once: true });
      },
      cancel() {
        cleanup();
      },
    },
    new ByteLengthQueuingStrategy({ highWaterMark: MAX_QUEUED_BYTES }),
  );
  return new Response(stream, {
    headers: {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    },
  });
}
