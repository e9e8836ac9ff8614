const PATH = '/api/events';

/**
 * The event stream's route, answered before Next.js (node-stream.ts), as the API documents it
 * (README's HTTP API table, the route list tests). Nothing here touches the server's state: the
 * tests' harness imports it before it sets the environment.
 */
export const EVENT_STREAM_ROUTES: ReadonlyArray<{ method: 'GET'; pattern: string }> = Object.freeze([{ method: 'GET', pattern: PATH }]);

/** Is this request for the event stream (any method; the query is the handler's to check)? */
export function matchEventStream(url: string | undefined): boolean {
  if (!url) return false;
  // The absolute form (`GET http://host/api/events HTTP/1.1`, sent to proxies) names the same path.
  if (url.charCodeAt(0) !== 47 /* / */) {
    try {
      url = new URL(url).pathname;
    } catch {
      return false;
    }
  }
  return url.startsWith(PATH) && (url.length === PATH.length || url.charCodeAt(PATH.length) === 63); /* ? */
}
