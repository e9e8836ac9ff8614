import { describe, expect, it } from 'vitest';
import { distinctShortTokens, shortToken } from '../../components/locks/token';
import { splitName } from '../../components/ui/middle-text';

describe('short tokens: unique among the tokens shown together', () => {
  it('three tokens of a split lock that share their first twenty characters read differently', () => {
    const tokens = ['tokSplitSharedPrefixAq7Hx', 'tokSplitSharedPrefixAZp2m', 'tokSplitSharedPrefixAKc9e'];
    const forms = distinctShortTokens(tokens);
    expect(new Set(forms.values()).size).toBe(3);
    // The first six characters, as before, read "tokSpl" three times.
    expect(new Set(tokens.map((t) => t.slice(0, 6))).size).toBe(1);
    for (const t of tokens) expect(forms.get(t)).toMatch(/^tok…/);
    expect(forms.get(tokens[0]!)).toBe('tok…7Hx');
  });

  it('tokens that differ only in their middle get longer ends until they differ, or are shown whole', () => {
    const a = 'abcdef-1-uvwxyz';
    const b = 'abcdef-2-uvwxyz';
    const forms = distinctShortTokens([a, b]);
    expect(forms.get(a)).not.toBe(forms.get(b));
    expect(forms.get(a)!.replace('…', '').length).toBeLessThanOrEqual(a.length);
  });

  it('a token alone keeps three characters at each end; a short one is whole; peers change only what is needed', () => {
    expect(shortToken('Zm9vYmFyYmF6cXV4cXV1eA')).toBe('Zm9…1eA');
    expect(shortToken('abc1234')).toBe('abc1234');
    // A peer that shares both ends makes both longer, and only as long as needed.
    expect(shortToken('Zm9vYmFyYmF6cXV4cXV1eA', ['Zm9AAAAAAAAAAAAAAAAAAAV1eA'])).toBe('Zm9v…V1eA');
  });
});

describe('long names keep their distinguishing end (components/ui/middle-text.tsx)', () => {
  it('six tenants that share their beginning keep different tails', () => {
    const names = Array.from({ length: 6 }, (_, i) => `tenant/acme-corporation-internal-billing-reconciliation-${i + 1}`);
    const tails = names.map((n) => splitName(n)[1]);
    expect(new Set(tails).size).toBe(6);
    for (const n of names) expect(splitName(n).join('')).toBe(n);
  });

  it('a short name is not split; a last path segment of a readable length is the tail', () => {
    expect(splitName('orders/42')).toEqual(['orders/42', '']);
    expect(splitName('tenant/acme-corporation/invoices-2026-11')).toEqual(['tenant/acme-corporation/', 'invoices-2026-11']);
    expect(splitName('inventory-sync@pod-inventory-sync-7f9c8d6b5-x2k4q')[1]).toBe('-7f9c8d6b5-x2k4q');
  });
});
