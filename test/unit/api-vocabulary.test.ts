import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, LIMITS, QUARANTINE_CAUSES, Redlock, VOTE_REASONS } from '@redlock-console/redlock';
import { acquireBodySchema, voteSchema } from '@/lib/api/locks';
import { quarantineSchema } from '@/lib/api/nodes';

// lib/api states the core's limits and words by reference (@redlock-console/redlock/vocabulary),
// so the HTTP contract refuses exactly what the core would: a 400 naming the field, not a 500 or
// a request the core turns down later.
const bodyError = (body: Record<string, unknown>) => {
  const parsed = acquireBodySchema.safeParse({ ttlMs: 1_000, ...body });
  return parsed.success ? null : parsed.error.issues[0]!.message;
};

describe('lib/api and the core agree', () => {
  it('a resource name is limited in UTF-8 bytes, as the core counts it (not in characters)', async () => {
    const tooLong = 'x'.repeat(300) + 'é'.repeat(110); // 410 characters, 520 bytes
    expect(bodyError({ resource: tooLong })).toMatch(/512 bytes/);
    expect(bodyError({ resource: 'x'.repeat(LIMITS.maxResourceBytes) })).toBeNull();
    const r = new Redlock(['redis://127.0.0.1:1'], { retryCount: 0 });
    try {
      await expect(r.acquire(tooLong, 1_000)).rejects.toBeInstanceOf(InvalidArgumentError);
    } finally {
      await r.quit();
    }
  });

  it('metadata and resource counts use the core limits', () => {
    const fields = Object.fromEntries(Array.from({ length: LIMITS.maxMetadataFields + 1 }, (_, i) => [`k${i}`, 'v']));
    expect(bodyError({ resource: 'r', metadata: fields })).toMatch(new RegExp(`at most ${LIMITS.maxMetadataFields}`));
    expect(bodyError({ resources: Array.from({ length: LIMITS.maxResources + 1 }, (_, i) => `r${i}`) })).not.toBeNull();
    expect(bodyError({ resources: Array.from({ length: LIMITS.maxResources }, (_, i) => `r${i}`) })).toBeNull();
  });

  it('every vote reason and quarantine cause of the core parses, and nothing else', () => {
    for (const reason of VOTE_REASONS) expect(voteSchema.safeParse({ node: 1, label: 'h:1', vote: 'against', reason }).success).toBe(true);
    expect(voteSchema.safeParse({ node: 1, label: 'h:1', vote: 'against', reason: 'made-up' }).success).toBe(false);
    const cause = quarantineSchema.shape.cause;
    for (const c of QUARANTINE_CAUSES) expect(cause.safeParse(c).success).toBe(true);
    expect(cause.safeParse('made-up').success).toBe(false);
  });
});
