import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { historyResponseSchema } from '../../lib/api/history';
import { startApi, type ApiHarness } from '../support/api';

/**
 * The charts' history on a real cluster with no screen open: the sampler reads node RTTs and lock
 * counts by itself, into one-second buckets and one-minute buckets (24 hours kept).
 */
let api: ApiHarness;
let stop: () => void = () => undefined;
beforeAll(async () => {
  api = await startApi({ nodes: 3 });
});
afterAll(async () => {
  stop();
  await api?.stop();
});

describe('history sampler', () => {
  it('fills the history while nobody reads, in both resolutions, and the API serves each', async () => {
    const { resetHistory, readHistory } = await import('../../lib/server/history');
    const { startHistorySampler } = await import('../../lib/server/history-sampler');
    resetHistory();
    expect(readHistory('1s')).toEqual([]);
    stop = startHistorySampler(200);
    const deadline = Date.now() + 10_000;
    let fine = readHistory('1s');
    while (Date.now() < deadline && !(fine.some((b) => b.rttMs !== null) && fine.some((b) => b.locks !== null))) {
      // poll: until both readings are in
      await new Promise((r) => setTimeout(r, 100));
      fine = readHistory('1s');
    }
    expect(fine.find((b) => b.rttMs !== null)?.rttMs).toHaveLength(3);
    expect(fine.some((b) => b.locks !== null)).toBe(true);
    const coarse = readHistory('1m');
    expect(coarse.length).toBeGreaterThanOrEqual(1);
    expect(coarse.at(-1)!.t % 60_000).toBe(0);
    expect(coarse.at(-1)!.locks).not.toBeNull();

    const res = await api.call('GET', '/api/history?resolution=1m', { as: 'viewer' });
    expect(res.status).toBe(200);
    const body = historyResponseSchema.parse(await res.json());
    expect(body.resolutionMs).toBe(60_000);
    expect(body.buckets.length).toBeGreaterThanOrEqual(1);
    expect((await api.call('GET', '/api/history?resolution=1h', { as: 'viewer' })).status).toBe(400);
  });
});
