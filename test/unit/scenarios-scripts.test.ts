import { describe, expect, it } from 'vitest';
import { OUTCOMES, SCENARIO_IDS } from '@/lib/api/scenarios';
import { createPrng, SCENARIOS, type Step } from '@/lib/scenarios';

/**
 * The scripts are data: check them for every scenario and many seeds, so a typo in a step (an
 * unknown client or resource, a reveal of a prediction that was never asked, a ttl above the
 * run's lease ceiling) fails here, not in front of a class.
 */
describe('scenario scripts', () => {
  it('the catalog has the thirteen scenarios of the API, numbered 1–13 in order', () => {
    expect(SCENARIOS.map((s) => s.id)).toEqual([...SCENARIO_IDS]);
    expect(SCENARIOS.map((s) => s.number)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]);
  });

  for (const scenario of SCENARIOS) {
    it(`${scenario.number} ${scenario.id}: well-formed for every seed`, () => {
      for (let seed = 0; seed < 50; seed++) {
        const script = scenario.build(createPrng(seed));
        const clients = new Set(script.clients.map((c) => c.name));
        const resources = new Set(script.resources.map((r) => r.name));
        const ids = script.steps.map((s) => s.id);
        expect(new Set(ids).size, 'step ids are unique').toBe(ids.length);
        expect(script.steps[0]!.chain, 'the first step opens a beat').toBeFalsy();
        const asked = new Map<string, string[]>();
        for (const step of script.steps) {
          if ('who' in step) {
            const who = Array.isArray(step.who) ? step.who : [step.who];
            for (const name of who) expect(clients.has(name), `${step.id}: client ${name}`).toBe(true);
          }
          if ('resource' in step) expect(resources.has(step.resource), `${step.id}: resource ${step.resource}`).toBe(true);
          if ('ttlMs' in step) expect(step.ttlMs).toBeLessThanOrEqual(script.maxTtlMs);
          if ('nodes' in step) for (const n of step.nodes ?? []) expect(n).toBeGreaterThanOrEqual(1);
          if (step.do === 'compare-fences')
            for (const name of [step.earlier, step.later]) expect(clients.has(name), `${step.id}: client ${name}`).toBe(true);
          if (step.do === 'deliver-write') {
            const sent = script.steps.findIndex((x) => x.id === step.sent);
            expect(sent, `${step.id} delivers a write sent before it`).toBeGreaterThanOrEqual(0);
            expect(sent).toBeLessThan(script.steps.indexOf(step));
            expect(script.steps[sent]!.do).toBe('send-write');
            expect(clients.has(step.keeps), `${step.id}: client ${step.keeps}`).toBe(true);
            for (const p of [step.revealsPlain, step.revealsFenced].filter((x) => x !== undefined)) {
              expect(asked.has(p), `${step.id} reveals ${p}, asked before`).toBe(true);
              expect(asked.get(p)!.sort()).toEqual(['no', 'yes']);
            }
          }
          if (step.do === 'restore-backup') {
            const backups = script.steps.slice(0, script.steps.indexOf(step)).filter((x) => x.do === 'backup');
            expect(
              backups.some((x) => x.nodes[0] === step.nodes[0]),
              `${step.id} restores a node backed up before it`,
            ).toBe(true);
          }
          if (step.do === 'predict') {
            expect(step.choices.length).toBeGreaterThanOrEqual(2);
            asked.set(
              step.id,
              step.choices.map((c) => c.id),
            );
          }
          if ('reveals' in step && step.reveals) {
            expect(asked.has(step.reveals), `${step.id} reveals ${step.reveals}, asked before`).toBe(true);
            if (step.do === 'acquire' && step.revealBy === 'granted')
              expect(asked.get(step.reveals)!.sort()).toEqual(['granted', 'refused']);
            else if (step.do === 'acquire' && step.revealBy !== 'overlap') {
              for (const c of asked.get(step.reveals)!) expect([...OUTCOMES, 'overlap', 'no-overlap']).toContain(c);
            }
          }
        }
        // A demo waits about its lease ceiling, sometimes twice: never more than 8 s (scenario 4's needs a slow restart's margin).
        expect(script.maxTtlMs).toBeLessThanOrEqual(8_000);
      }
    });
  }

  it('the same seed builds the same script; the seed picks which nodes fail', () => {
    const restart = SCENARIOS.find((s) => s.id === 'restart-without-persistence')!;
    expect(restart.build(createPrng(7))).toEqual(restart.build(createPrng(7)));
    const crashed = new Set(
      Array.from({ length: 20 }, (_, seed) => JSON.stringify(restart.build(createPrng(seed)).steps.find((s) => s.id === 'off-crash'))),
    );
    expect(crashed.size).toBeGreaterThan(1);
  });

  it("8 clock-drift: part 4 puts A on a bare majority and makes one of its nodes jump; nothing pauses from the partition to B's grant and writes", () => {
    const scenario = SCENARIOS.find((s) => s.id === 'clock-drift')!;
    for (let seed = 0; seed < 50; seed++) {
      const steps = scenario.build(createPrng(seed)).steps;
      const at = (id: string) => steps.findIndex((s) => s.id === id);
      const step = <K extends Step['do']>(id: string, kind: K) => {
        const found = steps[at(id)];
        expect(found?.do, id).toBe(kind);
        return found as Extract<Step, { do: K }>;
      };
      const cut = step('bare-partition', 'node').nodes;
      expect(cut).toHaveLength(2);
      const [jumper] = step('jump-bare', 'drift').nodes;
      expect(cut).not.toContain(jumper);
      expect(step('jump-bare', 'drift')).toMatchObject({ who: 'A', resource: 'ledger-4' });
      expect(step('b-4', 'acquire')).toMatchObject({ who: 'B', reveals: 'p-bare', revealBy: 'overlap' });
      expect(at('p-bare')).toBeLessThan(at('bare-partition'));
      for (let i = at('bare-partition'); i <= at('a-4-writes'); i++) {
        expect(steps[i]!.chain, steps[i]!.id).toBe(true);
        expect(steps[i]!.do).not.toBe('predict');
      }
      // Part 3 keeps A's key on all five nodes: one node jumping there must not be enough.
      expect(step('drift-300', 'drift').nodes).toHaveLength(1);
      expect(steps.slice(at('a-3'), at('b-3')).some((s) => s.do === 'node')).toBe(false);
    }
  });

  it("9 restart-from-snapshot: node c runs rdb and snapshots before A's bare-majority lock on it; B (checks off, unsafe) then C (default) ask right after its restart", () => {
    const scenario = SCENARIOS.find((s) => s.id === 'restart-from-snapshot')!;
    const crashed = new Set<number>();
    for (let seed = 0; seed < 50; seed++) {
      const script = scenario.build(createPrng(seed));
      const steps = script.steps;
      const at = (id: string) => steps.findIndex((s) => s.id === id);
      const step = <K extends Step['do']>(id: string, kind: K) => {
        const found = steps[at(id)];
        expect(found?.do, id).toBe(kind);
        return found as Extract<Step, { do: K }>;
      };
      expect(script.clients.find((c) => c.name === 'B')).toMatchObject({ nodeChecks: false });
      expect(script.clients.find((c) => c.name === 'B')?.quarantine).not.toBe(false); // only restart detection is off
      for (const name of ['A', 'C']) {
        const spec = script.clients.find((c) => c.name === name)!;
        expect(spec.nodeChecks !== false && spec.quarantine !== false, `${name} runs the defaults`).toBe(true);
      }
      const persistence = step('persistence', 'ensure-persistence');
      expect(persistence.mode).toBe('rdb');
      const [c] = persistence.nodes!;
      expect(persistence.nodes).toEqual([c]);
      crashed.add(c!);
      expect(at('persistence')).toBeLessThan(at('clean'));
      for (const [tag, asker, clean] of [
        ['off', 'B', 'clean'],
        ['on', 'C', 'clean-2'],
      ] as const) {
        const snap = step(`${tag}-snapshot`, 'snapshot');
        expect(snap.nodes).toEqual([c]);
        expect(at(clean)).toBeLessThan(at(`${tag}-snapshot`));
        expect(at(`${tag}-snapshot`)).toBeLessThan(at(`${tag}-holder-acquires`));
        const cut = step(`${tag}-partition`, 'node').nodes;
        expect(cut).toHaveLength(2);
        expect(cut).not.toContain(c);
        // The cut nodes are marked clean first, so their fence registers never start ahead of the holders'.
        const order = step(clean, 'mark-clean').order!;
        expect(order.slice(0, 2)).toEqual(cut);
        expect([...order].sort()).toEqual([1, 2, 3, 4, 5]);
        expect(step(`${tag}-holder-acquires`, 'acquire').who).toBe('A');
        expect(step(`${tag}-crash`, 'node')).toMatchObject({ action: { action: 'crash' }, nodes: [c] });
        expect(step(`${tag}-restart`, 'node')).toMatchObject({ action: { action: 'start', persistence: 'rdb' }, nodes: [c] });
        const asks = step(`${tag}-asker-asks`, 'acquire');
        expect(asks).toMatchObject({ who: asker, reveals: `p-${tag}` });
        expect(at(`p-${tag}`)).toBeLessThan(at(`${tag}-partition`));
        // From the partition to the ask nothing may pause: A's lease is running.
        for (let i = at(`${tag}-partition`); i <= at(`${tag}-asker-asks`); i++) {
          expect(steps[i]!.chain, steps[i]!.id).toBe(true);
          expect(steps[i]!.do).not.toBe('predict');
        }
      }
      expect(step('off-fences', 'compare-fences')).toMatchObject({ earlier: 'A', later: 'B' });
      expect(step('on-fences', 'compare-fences')).toMatchObject({ earlier: 'A', later: 'C' });
      expect(step('on-sit-out', 'wait-quarantine').nodes).toEqual([c]);
      // C asks again only once node c's quarantine and A's lease are both over.
      expect(at('on-sit-out')).toBeLessThan(at('on-c-acquires'));
      expect(step('on-a-lease', 'wait-validity')).toMatchObject({ who: 'A', resource: 'detection-on/ledger' });
      expect(at('on-a-lease')).toBeLessThan(at('on-c-acquires'));
    }
    expect(crashed.size, 'the seed picks the node that restarts').toBeGreaterThan(2);
  });

  it("10 delayed-write: A sends inside its lease, with nothing between its grant and the send; B's write comes before A's write arrives, which both predictions precede", () => {
    const scenario = SCENARIOS.find((s) => s.id === 'delayed-write')!;
    const script = scenario.build(createPrng(0));
    const steps = script.steps;
    const at = (id: string) => steps.findIndex((s) => s.id === id);
    expect(steps[at('a-sends')]).toMatchObject({ do: 'send-write', who: 'A', chain: true });
    expect(at('a-sends')).toBe(at('a-acquires') + 1);
    // A stops believing (its validity, then its release) before B asks: the checker must stay green.
    expect(steps[at('a-lease-ends')]).toMatchObject({ do: 'wait-validity', who: 'A' });
    expect(at('a-gives-up')).toBeLessThan(at('b-acquires'));
    expect(steps[at('b-writes')]).toMatchObject({ do: 'write', who: 'B' });
    const arrives = steps[at('a-write-arrives')]!;
    expect(arrives).toMatchObject({ do: 'deliver-write', sent: 'a-sends', keeps: 'B', revealsPlain: 'p-plain', revealsFenced: 'p-fenced' });
    expect(at('b-writes')).toBeLessThan(at('p-plain'));
    expect(at('p-fenced')).toBeLessThan(at('a-write-arrives'));
    expect(script.simulated.join(' ')).toMatch(/engine holds A's write/);
  });

  it('11 efficiency-vs-correctness: S locks on node 1 only, R on all five; both costs measured; node 1 crashes before either asks', () => {
    const scenario = SCENARIOS.find((s) => s.id === 'efficiency-vs-correctness')!;
    const script = scenario.build(createPrng(0));
    const steps = script.steps;
    const at = (id: string) => steps.findIndex((s) => s.id === id);
    expect(script.clients.find((c) => c.name === 'S')?.nodes).toEqual([1]);
    expect(script.clients.find((c) => c.name === 'R')?.nodes).toBeUndefined();
    expect(steps[at('measure')]).toMatchObject({ do: 'measure-locks', who: ['S', 'R'] });
    expect(steps[at('crash')]).toMatchObject({ do: 'node', action: { action: 'crash' }, nodes: [1] });
    for (const [id, p] of [
      ['s-asks', 'p-single'],
      ['r-asks', 'p-redlock'],
    ] as const) {
      expect(steps[at(id)]).toMatchObject({ do: 'acquire', reveals: p, revealBy: 'granted', chain: true });
      expect(at(p)).toBeLessThan(at('crash'));
      expect(at('crash')).toBeLessThan(at(id));
    }
    expect(steps[at('restart')]).toMatchObject({ do: 'node', action: { action: 'start' }, nodes: [1] });
  });

  it("12 restored-from-backup: node c, one of A's bare majority, is backed up after a check and restored in place (never restarted) right before B (default) then C (node checks off) ask", () => {
    const scenario = SCENARIOS.find((s) => s.id === 'restored-from-backup')!;
    const restored = new Set<number>();
    for (let seed = 0; seed < 50; seed++) {
      const script = scenario.build(createPrng(seed));
      const steps = script.steps;
      const at = (id: string) => steps.findIndex((s) => s.id === id);
      const step = <K extends Step['do']>(id: string, kind: K) => {
        const found = steps[at(id)];
        expect(found?.do, id).toBe(kind);
        return found as Extract<Step, { do: K }>;
      };
      const client = (name: string) => script.clients.find((c) => c.name === name)!;
      expect(client('C')).toMatchObject({ nodeChecks: false });
      expect(client('C').quarantine).not.toBe(false); // only the node checks are off
      for (const name of ['A', 'B']) expect(client(name).nodeChecks !== false && client(name).quarantine !== false, name).toBe(true);
      const [c] = step('on-backup', 'backup').nodes;
      restored.add(c);
      // Nothing restarts node c: the point is a rollback within one process.
      expect(steps.some((s) => s.do === 'node' && s.nodes.includes(c!) && s.action.action !== 'heal')).toBe(false);
      expect(steps.some((s) => s.do === 'ensure-persistence' || s.do === 'snapshot')).toBe(false);
      for (const [tag, asker, clean, warm] of [
        ['on', 'B', 'clean', 'b-warms-up'],
        ['off', 'C', 'clean-2', 'off-a-warms-up'],
      ] as const) {
        expect(step(`${tag}-backup`, 'backup').nodes).toEqual([c]);
        expect(step(`${tag}-restore`, 'restore-backup').nodes).toEqual([c]);
        // A check records the process's count of data-replacing commands in the sentinel before the
        // backup copies it (a sentinel without one judges nothing), after the clean start.
        // (Only a client with the node checks on records the count.)
        expect(client(step(warm, 'acquire').who).nodeChecks).not.toBe(false);
        expect(at(clean)).toBeLessThan(at(warm));
        expect(at(warm)).toBeLessThan(at(`${tag}-backup`));
        expect(at(`${tag}-backup`)).toBeLessThan(at(`${tag}-a-acquires`));
        const cut = step(`${tag}-partition`, 'node').nodes;
        expect(cut).toHaveLength(2);
        expect(cut).not.toContain(c);
        expect(step(clean, 'mark-clean').order!.slice(0, 2)).toEqual(cut);
        expect(step(`${tag}-a-acquires`, 'acquire').who).toBe('A');
        expect(at(`${tag}-heal`)).toBeLessThan(at(`${tag}-restore`));
        const asks = step(`${tag}-${asker.toLowerCase()}-asks`, 'acquire');
        expect(asks).toMatchObject({ who: asker, reveals: `p-${tag}`, revealBy: 'granted', waitForNodes: cut });
        expect(at(`${tag}-restore`)).toBe(at(`${tag}-${asker.toLowerCase()}-asks`) - 1);
        expect(at(`p-${tag}`)).toBeLessThan(at(`${tag}-partition`));
        // From the partition to the ask nothing may pause: A's lease is running.
        for (let i = at(`${tag}-partition`); i <= at(`${tag}-${asker.toLowerCase()}-asks`); i++) {
          expect(steps[i]!.chain, steps[i]!.id).toBe(true);
          expect(steps[i]!.do).not.toBe('predict');
        }
      }
      // Phase 1: node c sits out, then B asks again once A's lease is over too.
      expect(step('on-sit-out', 'wait-quarantine').nodes).toEqual([c]);
      expect(at('on-sit-out')).toBeLessThan(at('on-b-acquires'));
      expect(at('on-a-lease')).toBeLessThan(at('on-b-acquires'));
      expect(step('on-fences', 'compare-fences')).toMatchObject({ earlier: 'A', later: 'B' });
      // Phase 2 comes after phase 1's quarantine and every lock of phase 1 is released.
      expect(at('on-b-releases')).toBeLessThan(at('clean-2'));
      expect(step('off-fences', 'compare-fences')).toMatchObject({ earlier: 'A', later: 'C' });
      expect(script.simulated.join(' ')).toMatch(/SWAPDB/);
    }
    expect(restored.size, 'the seed picks the node that is restored').toBeGreaterThan(2);
  });

  it('13 semaphore-restart: 2-permit semaphores; B takes a permit on all five, A the other on a bare majority with node c, c restarts empty right before C (quarantine off) then F (on) asks', () => {
    const scenario = SCENARIOS.find((s) => s.id === 'semaphore-restart')!;
    const crashed = new Set<number>();
    for (let seed = 0; seed < 50; seed++) {
      const script = scenario.build(createPrng(seed));
      const steps = script.steps;
      const at = (id: string) => steps.findIndex((s) => s.id === id);
      const step = <K extends Step['do']>(id: string, kind: K) => {
        const found = steps[at(id)];
        expect(found?.do, id).toBe(kind);
        return found as Extract<Step, { do: K }>;
      };
      expect(script.resources.map((r) => [r.name, r.limit])).toEqual([
        ['quarantine-off/pool', 2],
        ['quarantine-on/pool', 2],
      ]);
      for (const name of ['A', 'B', 'C']) expect(script.clients.find((c) => c.name === name)).toMatchObject({ quarantine: false });
      for (const name of ['D', 'E', 'F']) expect(script.clients.find((c) => c.name === name)!.quarantine).not.toBe(false);
      const c = step('off-crash', 'node').nodes[0]!;
      crashed.add(c);
      for (const [tag, full, bare, asker] of [
        ['off', 'B', 'A', 'C'],
        ['on', 'E', 'D', 'F'],
      ] as const) {
        const cut = step(`${tag}-partition`, 'node').nodes;
        expect(cut).toHaveLength(2);
        expect(cut).not.toContain(c);
        // The full permit is taken on every node, then the bare one while two nodes are cut off (so on c and two others).
        expect(step(`${tag}-full-acquires`, 'acquire').who).toBe(full);
        expect(at(`${tag}-full-acquires`)).toBe(at(`${tag}-partition`) - 1);
        expect(step(`${tag}-bare-acquires`, 'acquire').who).toBe(bare);
        expect(at(`${tag}-bare-acquires`)).toBe(at(`${tag}-partition`) + 1);
        expect(step(`${tag}-crash`, 'node')).toMatchObject({ action: { action: 'crash' }, nodes: [c] });
        expect(step(`${tag}-restart`, 'node')).toMatchObject({ action: { action: 'start', persistence: 'none' }, nodes: [c] });
        const asks = step(`${tag}-asker-asks`, 'acquire');
        expect(asks).toMatchObject({ who: asker, reveals: `p-${tag}`, revealBy: 'granted', waitForNodes: [c, ...cut] });
        expect(at(`${tag}-restart`)).toBe(at(`${tag}-asker-asks`) - 1);
        expect(at(`p-${tag}`)).toBeLessThan(at(`${tag}-full-acquires`));
        // From the first grant to the ask nothing may pause: the permits' leases are running.
        for (let i = at(`${tag}-full-acquires`); i <= at(`${tag}-asker-asks`); i++) {
          expect(steps[i]!.chain, steps[i]!.id).toBe(true);
          expect(steps[i]!.do).not.toBe('predict');
        }
      }
      expect(at('off-c-releases')).toBeLessThan(at('clean-2'));
      expect(step('on-f-waits', 'acquire')).toMatchObject({ who: 'F', resource: 'quarantine-on/pool' });
    }
    expect(crashed.size, 'the seed picks the node that restarts').toBeGreaterThan(2);
  });

  it('the PRNG is deterministic and uniform enough', () => {
    const a = createPrng(42);
    const b = createPrng(42);
    const xs = Array.from({ length: 1_000 }, () => a.next());
    expect(xs).toEqual(Array.from({ length: 1_000 }, () => b.next()));
    expect(Math.min(...xs)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...xs)).toBeLessThan(1);
    const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
    expect(mean).toBeGreaterThan(0.45);
    expect(mean).toBeLessThan(0.55);
    expect(a.shuffle([1, 2, 3, 4, 5]).sort()).toEqual([1, 2, 3, 4, 5]);
  });
});
