import { describe, expect, it } from 'vitest';
import type { RunView } from '@/lib/api/scenarios';
import { fenceFormatter, runFences } from '../../components/scenarios/format';

describe('a run shows its fences so that their order is visible', () => {
  it('cuts after the shared digits: the newer fence reads larger (a fixed last-four tail read "…8001" above "…2001")', () => {
    const older = 1795624000008001;
    const newer = 1795624000012001;
    const show = fenceFormatter([older, newer]);
    expect(show(older)).toBe('…08001');
    expect(show(newer)).toBe('…12001');
    expect(show(newer) > show(older)).toBe(true);
    expect(show(null)).toBe('none');
  });

  it('for any fences of one length, the shown forms sort like the fences, and differ when they do', () => {
    let seed = 7;
    const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31);
    for (let round = 0; round < 200; round++) {
      const base = 1_795_600_000_000_000 + (next() % 1_000_000) * 1_000;
      const fences = Array.from({ length: 2 + (next() % 6) }, () => base + (next() % 50_000));
      const show = fenceFormatter(fences);
      for (const a of fences) {
        for (const b of fences) {
          expect(Math.sign(show(a).localeCompare(show(b))), `${a} vs ${b}`).toBe(Math.sign(a - b));
        }
      }
    }
  });

  it('keeps at least four digits, and shows a short fence whole', () => {
    expect(fenceFormatter([1795624000008001])(1795624000008001)).toBe('…08001');
    expect(fenceFormatter([1795624000008001, 1795624000008002])(1795624000008002)).toBe('…8002');
    expect(fenceFormatter([12, 15])(15)).toBe('15');
  });
});

describe('fences of different lengths, and the nodes fence registers', () => {
  it('shows fences whole when their lengths differ: no shared digits to cut after, a cut tail would hide the order', () => {
    const show = fenceFormatter([99_998_000, 100_004_001]);
    expect(show(99_998_000)).toBe('99998000');
    expect(show(100_004_001)).toBe('100004001');
  });

  it("counts the nodes' fence registers among the run's fences, so a register is cut like the grants it confirmed", () => {
    const run = {
      timeline: {
        attempts: [{ fence: 1795624000008000 }],
        beliefs: [],
        writes: [],
        fences: [
          { node: 1, at: 10, value: 1795624000014001 },
          { node: 2, at: 10, value: 0 },
        ],
      },
      stores: { fenced: { highest: null } },
    } as unknown as RunView;
    expect(runFences(run).sort()).toEqual([1795624000008000, 1795624000014001]);
    const show = fenceFormatter(runFences(run));
    expect(show(1795624000014001) > show(1795624000008000)).toBe(true);
  });
});
