import { QueryClient } from '@tanstack/react-query';
import { describe, expect, it } from 'vitest';
import { SILENCE_MS, watchConnection } from '../../lib/client/connection-health';
import { ApiError } from '../../lib/client/fetch-json';

/** The console's reachability as the query cache sees it: real TanStack queries, a clock of our own. */
describe('connection health', () => {
  it('is "not answering" only after a read got no answer and nothing else answered for SILENCE_MS', async () => {
    let t = 1_000_000;
    const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
    const changes: boolean[] = [];
    const watch = watchConnection(
      client.getQueryCache(),
      () => changes.push(watch.read().failing),
      () => t,
    );
    const answer = (key: string) => client.fetchQuery({ queryKey: [key, t], queryFn: async () => 'ok' });
    const fail = (key: string, status: number) =>
      client
        .fetchQuery({ queryKey: [key, t], queryFn: async () => Promise.reject(new ApiError(status, `status ${status}`)) })
        .catch(() => undefined);

    await answer('nodes');
    expect(watch.read()).toMatchObject({ failing: false, lastOkAt: t });

    // One endpoint hangs while the others answer: never offline, and no flapping.
    t += 1_000;
    await fail('nodes', 0);
    t += 500;
    await answer('locks');
    t += 3_000;
    await fail('nodes', 0);
    expect(watch.read().failing).toBe(false);

    // Nothing answers for longer than SILENCE_MS: offline, with the last good read.
    const lastOk = t - 3_000;
    t += SILENCE_MS;
    await fail('nodes', 0);
    expect(watch.read()).toMatchObject({ failing: true, lastOkAt: lastOk, problem: 'status 0' });

    // A 503 is an answer: the console is there again (the screen shows its own error).
    t += 1_000;
    await fail('locks', 503);
    expect(watch.read().failing).toBe(false);
    expect(changes.filter(Boolean)).toHaveLength(1);
    watch.stop();
  });
});
