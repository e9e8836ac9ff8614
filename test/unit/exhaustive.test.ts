import { describe, expect, it } from 'vitest';
import { exhaustive } from '../../lib/exhaustive';
import type { NodeActionName } from '../../lib/api/node-actions';

describe('exhaustive: the end of a switch over a closed union', () => {
  it('does not compile for a value that is not never, and throws naming it if one arrives anyway', () => {
    const name = 'crash' as NodeActionName;
    // @ts-expect-error — a union member not handled is a compile error (tsc runs over the tests too)
    expect(() => exhaustive(name, 'node action')).toThrow('unhandled node action: "crash"');
  });

  it('compiles once every member is handled', () => {
    const handled = (a: 'on' | 'off'): number => {
      switch (a) {
        case 'on':
          return 1;
        case 'off':
          return 0;
        default:
          return exhaustive(a, 'switch');
      }
    };
    expect([handled('on'), handled('off')]).toEqual([1, 0]);
  });
});
