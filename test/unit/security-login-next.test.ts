import { describe, expect, it } from 'vitest';
import { safeNextPath } from '../../components/auth/safe-next';

const ORIGIN = 'https://console.example:3000';

describe('login next: only a same-origin path', () => {
  it.each([
    '/\\evil.example', // a backslash is a slash to the browser: //evil.example
    '/%5Cevil', // …and so is an encoded one, to whatever decodes it again
    '/%5C%5Cevil.example/x',
    '/%2F/evil',
    '/\t/evil', // tabs and newlines are dropped: //evil
    '/\n/evil.example',
    '//evil',
    '/.//evil.example', // its path is //evil.example
    'https://evil',
    'https://console.example:3000.evil.example/',
    'http://console.example:3000/', // another scheme is another origin
    'javascript:alert(1)',
    'data:text/html,<script>alert(1)</script>',
    '\\\\evil.example',
    ' //evil',
  ])('%j → /', (next) => {
    expect(safeNextPath(next, ORIGIN)).toBe('/');
  });

  it.each([
    ['/', '/'],
    ['/locks?state=held', '/locks?state=held'],
    ['/locks/invoice%2042#nodes', '/locks/invoice%2042#nodes'],
    ['locks', '/locks'], // relative: resolved against the origin
    [`${ORIGIN}/audit`, '/audit'],
    [null, '/'],
    ['', '/'],
  ])('%j → %j', (next, expected) => {
    expect(safeNextPath(next, ORIGIN)).toBe(expected);
  });
});
