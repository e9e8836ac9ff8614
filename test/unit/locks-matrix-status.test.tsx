import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { MatrixFooter, ReadAt, ScanProgress, tabCount } from '../../components/locks/matrix-status';

const page = (complete: boolean, index = false) => ({
  readAt: Date.UTC(2026, 0, 1, 12),
  scanMs: 1_234.5,
  quorum: 3,
  complete,
  scannedKeys: 123_456,
  total: 30_000,
  matched: 29_000,
  index,
  nodes: [1, 2, 3, 4, 5].map((node) => ({ node, ok: true, error: null, keys: 24_000, durationMs: 150 })),
});

describe('the Locks screen while a scan is still running', () => {
  it('says so, with how far the scan has come, only for an incomplete page', () => {
    const html = renderToStaticMarkup(<ScanProgress page={page(false)} />);
    expect(html).toContain('data-testid="locks-scanning"');
    expect(html).toContain('role="status"');
    expect(html).toContain('123,456 keys read so far');
    expect(html).toContain('30,000 locks found');
    expect(renderToStaticMarkup(<ScanProgress page={page(true)} />)).toBe('');
    expect(renderToStaticMarkup(<ScanProgress page={undefined} />)).toBe('');
  });

  it('shows "scanning" instead of a scan time, and no totals, until the page is complete', () => {
    const now = Date.UTC(2026, 0, 1, 12, 0, 2);
    const early = renderToStaticMarkup(<ReadAt latest={page(false)} now={now} onRefresh={() => undefined} />);
    expect(early).toContain('scanning… 123,456 keys so far');
    expect(early).not.toContain('scan 1235 ms');
    const done = renderToStaticMarkup(<ReadAt latest={page(true)} now={now} onRefresh={() => undefined} />);
    expect(done).toContain('scan 1235 ms');
    expect(done).toContain('quorum 3 of 5');
    // Read from the live index (only what changed was read again): said so, not called a scan.
    const indexed = renderToStaticMarkup(<ReadAt latest={page(true, true)} now={now} onRefresh={() => undefined} />);
    expect(indexed).toContain('live index, 1235 ms');
    expect(indexed).not.toContain('scan 1235 ms');

    expect(tabCount(page(false), 40)).toBe('…');
    expect(tabCount(page(true), 40_000)).toBe('40,000');
    expect(tabCount(page(true), undefined)).toBe('0');
    expect(tabCount(undefined, 3)).toBe('–');

    const footer = renderToStaticMarkup(<MatrixFooter latest={page(false)} loaded={500} matching={false} hasNextPage={false} />);
    expect(footer).toMatch(
      /Scanning · <strong>500<\/strong> locks shown of <strong data-testid="locks-matched">29,000<\/strong> found so far/,
    );
    const full = renderToStaticMarkup(<MatrixFooter latest={page(true)} loaded={500} matching hasNextPage />);
    expect(full).toMatch(
      /<strong>500<\/strong> of <strong data-testid="locks-matched">29,000<\/strong> matching locks loaded · more load as you scroll/,
    );
  });
});

describe('the Locks screen when the masters could not be read', () => {
  const now = Date.UTC(2026, 0, 1, 12, 0, 1);
  const withNodes = (ok: boolean[]) => ({
    ...page(true),
    matched: 0,
    nodes: ok.map((o, i) => ({ node: i + 1, ok: o, error: o ? null : 'timed out', keys: 0, durationMs: 150 })),
  });

  it('no master answered: a grey dot and "nothing read", never the green "Read" and never "0 of 0"', () => {
    const unread = withNodes([false, false, false, false, false]);
    const read = renderToStaticMarkup(<ReadAt latest={unread} now={now} onRefresh={() => undefined} />);
    expect(read).toContain('data-state="unread"');
    expect(read).toContain('Nothing read, no master answered');
    expect(read).toMatch(/readUnknown/);
    const footer = renderToStaticMarkup(<MatrixFooter latest={unread} loaded={0} matching={false} hasNextPage={false} />);
    expect(footer).toContain('No master answered: how many locks there are is unknown');
    expect(footer).not.toMatch(/<strong>0<\/strong> of/);
  });

  it('some masters answered: an amber dot, how many were read, and the count as a floor', () => {
    const some = { ...withNodes([true, true, true, false, false]), matched: 7 };
    const read = renderToStaticMarkup(<ReadAt latest={some} now={now} onRefresh={() => undefined} />);
    expect(read).toContain('data-state="partial"');
    expect(read).toContain('Read from 3 of 5 masters');
    expect(read).toMatch(/readStale/);
    const footer = renderToStaticMarkup(<MatrixFooter latest={some} loaded={7} matching={false} hasNextPage={false} />);
    expect(footer).toContain('≥ 7');
    expect(footer).toContain('3 of 5 masters read');
    // Every master read: green, "Read".
    const all = renderToStaticMarkup(<ReadAt latest={page(true)} now={now} onRefresh={() => undefined} />);
    expect(all).toContain('data-state="read"');
    expect(all).not.toMatch(/readUnknown|readStale/);
  });
});
