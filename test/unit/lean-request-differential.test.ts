import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compare, disagreement, smallest, STREAM } from '../support/lean-differential';
import { parseAsNode, parseWithServer } from '../support/llhttp';

/**
 * The lean reader against Node's own parser on generated framings: test/support/lean-differential.ts
 * says what must hold and how the streams are made.
 */
// ---- the tests -----------------------------------------------------------------------------

const RUNS = Number(process.env.LEAN_FUZZ_RUNS ?? 100_000);
const SEED = Number(process.env.LEAN_FUZZ_SEED ?? 38);

describe('the lean reader against llhttp (differential)', () => {
  it('test/support/llhttp.ts reads as a real node:http server does (2,000 generated streams)', async () => {
    const head = (r: { method: string; url: string; version: string; headers: Array<[string, string]> }) => ({
      method: r.method,
      url: r.url,
      version: r.version,
      headers: r.headers,
    });
    const samples = fc.sample(STREAM, { numRuns: 2_000, seed: SEED + 1 });
    // Each on a server and socket of its own, 250 at a time.
    const reals: Awaited<ReturnType<typeof parseWithServer>>[] = [];
    for (let i = 0; i < samples.length; i += 250) reals.push(...(await Promise.all(samples.slice(i, i + 250).map(parseWithServer))));
    for (const [n, bytes] of samples.entries()) {
      const raw = parseAsNode(bytes);
      const real = reals[n]!;
      const label = JSON.stringify(bytes.toString('latin1'));
      const all = [...raw.requests, ...(raw.pending ? [raw.pending] : [])];
      const handled = all.filter((r) => r.answeredByNode === undefined);
      expect(real.requests.map(head), label).toEqual(handled.map(head));
      for (const [i, r] of real.requests.entries())
        if (r.body !== null) expect(r.body.toString('latin1'), label).toBe(handled[i]!.body.toString('latin1'));
      const refused = real.statuses.some((s) => s >= 400 && s !== 417);
      // Node writes its 400 for a parse error only while no answer is under way: not right after its own 417.
      const parseRefusal = raw.code !== undefined && all[all.length - 1]?.answeredByNode !== 417;
      expect(refused, label).toBe(parseRefusal || all.some((r) => r.answeredByNode === 400));
    }
  });

  it(`agrees on ${RUNS.toLocaleString('en')} generated streams (seed ${SEED})`, () => {
    let streams = 0;
    let taken = 0;
    let pipelined = 0;
    const started = performance.now();
    fc.assert(
      fc.property(STREAM, (bytes) => {
        streams++;
        const { taken: count, found } = compare(bytes);
        if (found !== undefined) {
          const small = smallest(bytes);
          throw new Error(
            `${found}\nbytes: ${JSON.stringify(bytes.toString('latin1'))}\nsmallest: ${JSON.stringify(small.toString('latin1'))} (${disagreement(small)})`,
          );
        }
        if (count > 0) taken++;
        if (count > 1) pipelined++;
      }),
      { numRuns: RUNS, seed: SEED, endOnFailure: true },
    );
    const ms = performance.now() - started;
    console.info(
      `lean/llhttp differential: ${streams} streams in ${Math.round(ms)} ms; the lean reader took the first request of ${taken}, the second too of ${pipelined}`,
    );
    // The generator must reach the lean reader's side often, or the comparison proves little.
    expect(taken / streams).toBeGreaterThan(0.25);
    expect(pipelined / streams).toBeGreaterThan(0.03);
  }, 120_000);
});
