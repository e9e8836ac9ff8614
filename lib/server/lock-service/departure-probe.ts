import 'server-only';

/**
 * A client's FIN during a waiting acquire says only that it will send nothing more: a client that
 * half-closes after its request still waits for the answer, one that has closed its
 * socket has gone, and the two look alike. Writing to a socket its peer has closed draws a reset,
 * and the write after that fails: so while an acquire waits after a FIN, the server writes a
 * `100 Continue` interim answer now and then (every HTTP/1.1 client must read and skip 1xx
 * answers before the final one; Python's http.client skips only 100, hence 100). A client that
 * is still there skips them; for one that has gone, the second write fails, the socket closes, and
 * the wait stops (its 'close' aborts it), at most about one round trip plus 20 ms after the FIN,
 * then about twice the pause between probes as the pauses lengthen to 500 ms.
 */
export const CONTINUE = 'HTTP/1.1 100 Continue\r\n\r\n';
const FIRST_MS = 20;
const LONGEST_MS = 500;

/** Probe now, then after 20, 40, 80… ms (at most 500 ms apart) until the returned stop is called. */
export function probeDeparture(write: () => void): () => void {
  let timer: NodeJS.Timeout | null = null;
  let pause = FIRST_MS;
  const probe = () => {
    write();
    timer = setTimeout(probe, pause).unref();
    pause = Math.min(LONGEST_MS, pause * 2);
  };
  probe();
  return () => {
    if (timer) clearTimeout(timer);
    timer = null;
  };
}
