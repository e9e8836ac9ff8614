/**
 * A scrape without the `replica` label every series carries (lib/server/metrics.ts: the console
 * process it came from), for tests that read one console's series by their own labels. The label
 * stands last, or (histograms) before the metric's own labels.
 */
export function withoutReplica(text: string): string {
  return text.replace(/([{,])replica="[^"]*"([,}])/g, (_all, before: string, after: string) =>
    before === '{' ? (after === '}' ? '' : '{') : after,
  );
}
