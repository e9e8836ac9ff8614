import { describe, expect, it } from 'vitest';
import { parseMonitorLine } from '../support/monitor';

describe("MONITOR's feed lines (test/support/monitor.ts)", () => {
  it('gives the source and the arguments, escapes undone', () => {
    expect(parseMonitorLine('+1339518083.107412 [0 127.0.0.1:60866] "keys" "*"')).toEqual({
      source: '127.0.0.1:60866',
      args: ['keys', '*'],
    });
    expect(parseMonitorLine('+1.5 [3 lua] "HMGET" "rl:epoch" "createdAt"')).toEqual({
      source: 'lua',
      args: ['HMGET', 'rl:epoch', 'createdAt'],
    });
    expect(parseMonitorLine('+1.5 [0 127.0.0.1:1] "SET" "a \\"b\\"" "x\\r\\ny\\\\" "\\x00\\xff"')).toEqual({
      source: '127.0.0.1:1',
      args: ['SET', 'a "b"', 'x\r\ny\\', '\x00\xff'],
    });
    expect(parseMonitorLine('+OK')).toBeNull();
  });
});
