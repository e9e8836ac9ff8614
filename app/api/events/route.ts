import type { LiveEvent } from '@/lib/api/events';
import { getEventHub } from '@/lib/server/events';
import { route } from '@/lib/server/http/route';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

const encoder = new TextEncoder();

/** Server-sent events: lock and node changes as they happen; a comment every 15 s keeps proxies open. */
export const GET = route({ permission: 'read' }, async ({ req }) => {
  let cleanup = () => undefined as void;
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      const send = (chunk: string) => {
        try {
          controller.enqueue(encoder.encode(chunk));
        } catch {
          cleanup();
        }
      };
      send(`retry: 2000\n: connected ${Date.now()}\n\n`);
      const unsubscribe = getEventHub().subscribe((event: LiveEvent) => send(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`));
      const heartbeat = setInterval(() => send(`: heartbeat ${Date.now()}\n\n`), 15_000);
      cleanup = () => {
        clearInterval(heartbeat);
        unsubscribe();
        try {
          controller.close();
        } catch {
          // already closed
        }
      };
      req.signal.addEventListener('abort', () => cleanup(), { once: true });
    },
    cancel() {
      cleanup();
    },
  });
  return new Response(stream, {
    headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store, no-transform', connection: 'keep-alive', 'x-accel-buffering': 'no' },
  });
});
