import { describe, expect, it } from 'vitest';
import { NodeKeyEvents } from '@/lib/server/events/keyspace-source';

/**
 * One node's keyevents as the lock core causes them (keyspace-source.ts says which). The source
 * subscribes to `expire`, `del` and `expired` only: a TTL is written by grants (`SET … NX PX`,
 * reported `set` then `expire`) and extends (`PEXPIRE … GT`, then the value's rewrite: `expire`
 * then `set`), never by a value rewrite (the fence round's `SET … XX KEEPTTL`: `set` alone).
 */
describe('keyevents of a lock key on one node', () => {
  const run = (events: NodeKeyEvents, sequence: [string, string][]) => sequence.map(([event, key]) => events.classify(event, key));

  it("a grant is one lock.granted, from its TTL's expire; a set is never an event (it is not subscribed to)", () => {
    const events = new NodeKeyEvents();
    // A fenced grant as Redis publishes it on every channel: the grant's set and PX, the fence round's set.
    expect(
      run(events, [
        ['set', 'k'],
        ['expire', 'k'],
        ['set', 'k'],
      ]),
    ).toEqual([null, 'lock.granted', null]);
    // Even a set on a key this node does not hold.
    expect(run(events, [['set', 'fresh']])).toEqual([null]);
  });

  it('an extend is one lock.extended, also right after the grant; its value rewrite is nothing', () => {
    const events = new NodeKeyEvents();
    expect(
      run(events, [
        ['expire', 'k'],
        ['expire', 'k'],
        ['set', 'k'],
        ['expire', 'k'],
      ]),
    ).toEqual(['lock.granted', 'lock.extended', null, 'lock.extended']);
  });

  it('after a release or an expiry the next expire is a grant again', () => {
    const events = new NodeKeyEvents();
    expect(
      run(events, [
        ['expire', 'k'],
        ['del', 'k'],
        ['expire', 'k'],
        ['expired', 'k'],
        ['expire', 'k'],
      ]),
    ).toEqual(['lock.granted', 'lock.released', 'lock.granted', 'lock.expired', 'lock.granted']);
  });

  it('keys are tracked one by one (a multi-resource grant sets each in turn)', () => {
    const events = new NodeKeyEvents();
    expect(
      run(events, [
        ['expire', 'a'],
        ['expire', 'b'],
        ['expire', 'a'],
        ['del', 'b'],
      ]),
    ).toEqual(['lock.granted', 'lock.granted', 'lock.extended', 'lock.released']);
  });

  it('reset forgets every key: a key held across it is reported granted at its next extension', () => {
    const events = new NodeKeyEvents();
    run(events, [['expire', 'old']]);
    events.reset();
    expect(
      run(events, [
        ['expire', 'old'],
        ['rename_from', 'old'],
      ]),
    ).toEqual(['lock.granted', null]);
  });
});
