import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '@redlock-console/redlock';
import { NodeConnection } from '../../src/connection';
import { nodeProbes } from '../../src/grant-plan';
import { timeRead, type LockNode } from '../../src/node';
import { nodeLabel } from '../../src/node-label';
import { parseNodeUrl } from '../../src/node-url';
import { decodeCommand } from '../../src/resp';
import { TIME_SCRIPT } from '../../src/scripts';

// A node behind twemproxy. A node URL's only query parameter: `?proxy=twemproxy`, which
// makes the core's own connection proxy-safe from the start (no detection step); everything else
// stays refused up front. And the TIME a grant reads before its SET: inside Lua for such a node.

describe('parseNodeUrl ?proxy=twemproxy', () => {
  it('marks the address as behind twemproxy; without it the address says nothing (the handshake finds out)', () => {
    expect(parseNodeUrl('redis://:pw@10.0.0.5:22121?proxy=twemproxy')).toEqual({
      host: '10.0.0.5',
      port: 22121,
      tls: false,
      username: null,
      password: 'pw',
      db: 0,
      proxy: 'twemproxy',
    });
    expect(parseNodeUrl('rediss://proxy.example/0?proxy=twemproxy').proxy).toBe('twemproxy');
    expect('proxy' in parseNodeUrl('redis://10.0.0.5:6379')).toBe(false);
    // The label (votes, events, the duplicate check) is host:port, the query left out.
    expect(nodeLabel('redis://10.0.0.5:22121?proxy=twemproxy')).toBe('10.0.0.5:22121');
  });

  for (const [url, message] of [
    ['redis://10.0.0.5:6379?family=6', /takes no query or fragment, but for \?proxy=twemproxy/],
    ['redis://10.0.0.5:6379?proxy=twemproxy&family=6', /takes no query or fragment, but for \?proxy=twemproxy/],
    ['redis://10.0.0.5:6379?proxy=twemproxy&proxy=twemproxy', /takes no query or fragment, but for \?proxy=twemproxy/],
    ['redis://10.0.0.5:6379?proxy=twemproxy#x', /takes no query or fragment/],
    ['redis://10.0.0.5:6379?proxy=envoy', /\?proxy= names the proxy before it \(twemproxy\), got "envoy"/],
    ['redis://10.0.0.5:6379?proxy=', /got ""/],
    ['redis://10.0.0.5:6379/2?proxy=twemproxy', /database 0 only.*drop \/2/],
    ['redis://locker:pw@10.0.0.5:6379?proxy=twemproxy', /no user: drop the user name/],
  ] as const) {
    it(`refuses ${url} before connecting, saying why`, () => {
      expect(() => parseNodeUrl(url)).toThrow(InvalidArgumentError);
      expect(() => parseNodeUrl(url)).toThrow(message);
    });
  }

  it('a connection to such an address is proxy-safe before it connects', () => {
    const conn = new NodeConnection(parseNodeUrl('redis://127.0.0.1:1?proxy=twemproxy'));
    const direct = new NodeConnection(parseNodeUrl('redis://127.0.0.1:1'));
    conn.on('error', () => undefined);
    direct.on('error', () => undefined);
    try {
      expect(conn.proxySafe).toBe(true);
      expect(direct.proxySafe).toBe(false);
    } finally {
      conn.disconnect();
      direct.disconnect();
    }
  });
});

describe('the TIME read before a grant (node.ts timeRead)', () => {
  const probes = nodeProbes('t:epoch', 't:fence', 60_000, '2', 1_000, 1);
  const node = (proxySafe: boolean, connecting: boolean) => ({ proxySafe, connecting }) as unknown as LockNode;

  it('is plain TIME on a direct node, TIME inside Lua (EVAL, one key: the sentinel) on a proxy-safe one or one still connecting', () => {
    expect(timeRead(node(false, false), probes)).toBe(probes.time);
    expect(decodeCommand(probes.time).map(String)).toEqual(['TIME']);
    for (const n of [node(true, false), node(false, true), node(true, true)]) expect(timeRead(n, probes)).toBe(probes.timeInLua);
    // EVAL, never EVALSHA: a NOSCRIPT fall back would re-send it after the SET (node.ts timeRead).
    expect(decodeCommand(probes.timeInLua).map(String)).toEqual(['EVAL', TIME_SCRIPT.source, '1', 't:epoch']);
  });
});
