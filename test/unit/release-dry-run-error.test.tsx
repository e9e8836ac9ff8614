import type { UseQueryResult } from '@tanstack/react-query';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { BulkReleaseResults } from '../../components/locks/bulk-release-results';
import { ForceReleasePreview } from '../../components/locks/force-release-parts';
import { ApiError } from '../../lib/client/fetch-json';

/** A dry run the console refused (`status`), as react-query hands it to the dialog. */
const refused = (status: number, message: string) =>
  ({
    isError: true,
    error: new ApiError(status, message),
    isFetching: false,
    data: undefined,
    refetch: () => Promise.resolve(),
  }) as unknown as UseQueryResult<never>;

const single = (preview: UseQueryResult<never>) =>
  renderToStaticMarkup(
    <ForceReleasePreview
      preview={preview}
      wouldDelete={0}
      labels={new Map()}
      token="tok"
      liveConfirmed={false}
      onLiveConfirm={() => undefined}
      busy={false}
    />,
  );
const bulk = (preview: UseQueryResult<never>) =>
  renderToStaticMarkup(<BulkReleaseResults preview={preview} result={undefined} willDelete={0} itemCount={2} />);

/** The alert right under the dry run's head, and what comes after it. */
const alertAfterHead = (html: string) =>
  html.match(/Check again<\/button><\/div><p class="callout callout-bad" role="alert">([^<]*)<\/p>(.*)$/);

describe("a force-release dialog's dry run that failed (the single and the bulk dialog alike)", () => {
  it('says why in an alert under its head, a 403 as who may release, in place of the outcomes', () => {
    for (const [name, render] of [
      ['single', single],
      ['bulk', bulk],
    ] as const) {
      const forbidden = alertAfterHead(render(refused(403, 'forbidden')));
      expect(forbidden?.[1], name).toBe('Only operators can force-release locks.');
      expect(forbidden?.[2], name).not.toContain('Asking every node');
      expect(alertAfterHead(render(refused(503, 'no quorum: 2 of 5 nodes answered')))?.[1], name).toBe('no quorum: 2 of 5 nodes answered');
    }
  });
});
