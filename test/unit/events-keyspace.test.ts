import { describe, expect, it } from 'vitest';
import { NodeKeyEvents } from '@/lib/server/events/keyspace-source';

/**
 * One node's keyevents as the lock core causes them. A grant is `SET … NX PX` (Redis reports `set`
 * then `expire`); an extend runs `PEXPIRE … GT` (`expire`) and then rewrites the value
 * (`SET … KEEPTTL`: `set`); a fenced grant's second round rewrites the value (`set`) alone.
 */
describe('keyevents of a lock key on one node', () => {
  const run = (events: NodeKeyEvents, sequence: [string, string][]) => sequence.map(([event, key]) => events.classify(event, key));

  it("a grant is one lock.granted: its own PX is not an extension, nor is the fence round's rewrite a grant", () => {
    const events = new NodeKeyEvents();
    expect(
      run(events, [
        ['set', 'k'],
        ['expire', 'k'],
        ['set', 'k'],
      ]),
    ).toEqual(['lock.granted', null, null]);
  });

  it("an extend is one lock.extended (the value rewrite after it is not a grant); a bare token's extend too", () => {
    const events = new NodeKeyEvents();
    run(events, [
      ['set', 'k'],
      ['expire', 'k'],
    ]);
    expect(
      run(events, [
        ['expire', 'k'],
        ['set', 'k'],
      ]),
    ).toEqual(['lock.extended', null]);
    // A bare token's extend (PEXPIRE, which Redis reports as `expire`).
    expect(run(events, [['expire', 'k']])).toEqual(['lock.extended']);
  });

  it('after a release or an expiry the next set is a grant again', () => {
    const events = new NodeKeyEvents();
    expect(
      run(events, [
        ['set', 'k'],
        ['expire', 'k'],
        ['del', 'k'],
        ['set', 'k'],
        ['expire', 'k'],
        ['expired', 'k'],
        ['set', 'k'],
      ]),
    ).toEqual(['lock.granted', null, 'lock.released', 'lock.granted', null, 'lock.expired', 'lock.granted']);
  });

  it('keys are tracked one by one (a multi-resource grant sets each in turn)', () => {
    const events = new NodeKeyEvents();
    expect(
      run(events, [
        ['set', 'a'],
        ['expire', 'a'],
        ['set', 'b'],
        ['expire', 'b'],
        ['expire', 'a'],
      ]),
    ).toEqual(['lock.granted', null, 'lock.granted', null, 'lock.extended']);
  });

  it('a key held before the events started is extended, not granted, once an expire shows it; reset forgets every key', () => {
    const events = new NodeKeyEvents();
    expect(
      run(events, [
        ['expire', 'old'],
        ['set', 'old'],
      ]),
    ).toEqual(['lock.extended', null]);
    events.reset();
    expect(
      run(events, [
        ['set', 'old'],
        ['rename_from', 'old'],
      ]),
    ).toEqual(['lock.granted', null]);
  });
});
