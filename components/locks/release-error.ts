import { ApiError } from '@/lib/client/fetch-json';

/** A force-release's failure in words (single or bulk, preview or release): a 403 says who may; others say what the API said. */
export function releaseErrorText(err: unknown): string {
  if (err instanceof ApiError && err.status === 403) return 'Only operators can force-release locks.';
  return err instanceof Error ? err.message : String(err);
}
