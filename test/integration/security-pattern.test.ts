import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LockListResponse } from '../../lib/api/locks';
import { startApi, type ApiHarness } from '../support/api';

/**
 * `GET /api/locks?pattern=app:*` gave a viewer the raw value of
 * `app:user:42:password_reset_token`. On a shared Redis that is a leak: viewers now see a value
 * that is not one of the console's locks only as a fingerprint (a short keyed hash, its length,
 * its TTL) and search key names only; operators see it raw.
 */

const SECRET = 'reset-7f3a9c21e5d04b';
const RESET_KEY = 'app:user:42:password_reset_token';

let api: ApiHarness;
beforeAll(async () => {
  api = await startApi({ nodes: 3 });
  for (const id of [1, 2, 3]) {
    const c = api.cluster.client(id);
    await c.connect();
    await c.set(RESET_KEY, SECRET, 'PX', 120_000);
    await c.set('app:session:9', `tok9 {"owner":"${SECRET}"}`, 'PX', 120_000); // a value whose tail parses as "metadata"
    await c.set('app:lock:mutex', id === 3 ? 'another-value' : 'same-everywhere', 'PX', 120_000);
  }
});
afterAll(async () => {
  await api?.stop();
});

async function list(as: 'viewer' | 'operator', query: string): Promise<{ text: string; body: LockListResponse }> {
  const res = await api.call('GET', `/api/locks?fresh=1&${query}`, { as });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  return { text, body: JSON.parse(text) as LockListResponse };
}

describe('pattern reads of foreign keys', () => {
  it('a viewer sees a fingerprint (short hash, length, TTL), never the raw value', async () => {
    const { text, body } = await list('viewer', 'pattern=app:*');
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain('reset-7f');
    expect(text).not.toContain('tok9');
    const reset = body.items.find((v) => v.key === RESET_KEY)!;
    expect(reset.cells).toHaveLength(3);
    for (const cell of reset.cells) {
      expect(cell.token).toMatch(/^[0-9a-f]{10}… \(fingerprint, 20 bytes\)$/);
      expect(cell.pttlMs).toBeGreaterThan(60_000);
      expect(cell.meta).toBeNull();
    }
    expect(reset.majorityToken).toBe(reset.cells[0]!.token); // equal values, equal fingerprints: the matrix still works
    const session = body.items.find((v) => v.key === 'app:session:9')!;
    expect(session.meta).toBeNull();
    const mutex = body.items.find((v) => v.key === 'app:lock:mutex')!;
    expect(mutex.cells[0]!.token).toBe(mutex.cells[1]!.token);
    expect(mutex.cells[2]!.token).not.toBe(mutex.cells[0]!.token);
  });

  it("a viewer's search matches key names, never values (no oracle)", async () => {
    expect((await list('viewer', `pattern=app:*&search=${encodeURIComponent('reset-7f')}`)).body.matched).toBe(0);
    expect((await list('viewer', `pattern=app:*&search=${encodeURIComponent(SECRET)}`)).body.matched).toBe(0);
    const byKey = await list('viewer', 'pattern=app:*&search=password_reset');
    expect(byKey.body.items.map((v) => v.key)).toEqual([RESET_KEY]);
    expect(byKey.text).not.toContain(SECRET);
  });

  it('an operator sees the raw value', async () => {
    const { body } = await list('operator', 'pattern=app:*');
    expect(body.items.find((v) => v.key === RESET_KEY)!.majorityToken).toBe(SECRET);
  });

  it("the console's own locks, read by pattern, still show their tokens to a viewer", async () => {
    const grant = await api.call('POST', '/api/locks', { as: 'client', body: { resource: 'pattern-own', ttlMs: api.maxTtlMs } });
    expect(grant.status).toBe(200);
    const { token } = (await grant.json()) as { token: string };
    const { body } = await list('viewer', 'pattern=rl:lock:pattern-*');
    expect(body.items.find((v) => v.key === 'rl:lock:pattern-own')!.majorityToken).toBe(token);
  });
});
