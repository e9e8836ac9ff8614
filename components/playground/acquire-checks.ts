import { formatCount } from '@/components/locks/format';

/** A metadata field of the acquire form (`id` keys the row while its name is edited). */
export interface MetaRow {
  id: number;
  key: string;
  value: string;
}

/** The resources typed, split at commas and new lines. */
export function resourceNames(resources: string): string[] {
  return resources
    .split(/[,\n]/)
    .map((s) => s.trim())
    .filter(Boolean);
}

/** What is wrong with a TTL, or null: a whole number of ms above 0, at most the cluster's lease ceiling. */
export function ttlProblem(ttlMs: number, maxTtl: number | null): string | null {
  return !Number.isInteger(ttlMs) || ttlMs <= 0
    ? 'a whole number of ms above 0'
    : maxTtl !== null && ttlMs > maxTtl
      ? `at most ${formatCount(maxTtl)} ms (the cluster's lease ceiling)`
      : null;
}

/** What is wrong with a wait, or null: 0 to 30 s. */
export function waitProblem(waitMs: number): string | null {
  return !Number.isInteger(waitMs) || waitMs < 0 || waitMs > 30_000 ? '0 to 30,000 ms' : null;
}

/** What is wrong with the metadata, or null: each field named once (unnamed rows are left out). */
export function metaProblem(meta: readonly MetaRow[]): string | null {
  const metaKeys = meta.map((m) => m.key.trim()).filter(Boolean);
  return new Set(metaKeys).size !== metaKeys.length ? 'each field once' : null;
}
