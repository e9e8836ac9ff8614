import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// The lock core uses ioredis through its public API only: its own connections are its
// own (connection.ts), and clients passed in are driven by pipeline().callBuffer. A private member
// of an ioredis client (the names below are ioredis 5's and 6's internals) must not reappear.
const PRIVATE = [
  'commandQueue',
  'offlineQueue',
  'initPromise',
  'stream',
  'condition',
  'prevCondition',
  'connector',
  'manuallyClosing',
  'retryAttempts',
  '_readyCheck',
  'subscriptionSet',
  'setStatus',
  'flushQueue',
  'silentEmit',
  '_autoPipelines',
  '_runningAutoPipelines',
];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

describe('the lock core and ioredis', () => {
  const files = sources(join(import.meta.dirname, '..', '..', 'src'));

  it('reads the source of the whole package', () => {
    expect(files.some((f) => f.endsWith('node.ts'))).toBe(true);
    expect(files.length).toBeGreaterThan(20);
  });

  it('touches no private member of an ioredis client', () => {
    const pattern = new RegExp(`\\.(${PRIVATE.join('|')})\\b|\\[['"](${PRIVATE.join('|')})['"]\\]`);
    const hits = files
      .flatMap((f) =>
        readFileSync(f, 'utf8')
          .split('\n')
          .map((line, i) => [f, i + 1, line] as const),
      )
      .filter(([, , line]) => !line.trim().startsWith('*') && !line.trim().startsWith('//') && pattern.test(line))
      .map(([f, n, line]) => `${f}:${n}: ${line.trim()}`);
    expect(hits).toEqual([]);
  });
});
