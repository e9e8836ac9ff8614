import type { z } from 'zod';

/** "ttlMs: must be a positive integer; unknown field(s): foo" — one line naming every problem. */
export function zodMessage(error: z.ZodError, where: string): string {
  const parts = error.issues.map((issue) => {
    if (issue.code === 'unrecognized_keys')
      return `unknown field(s): ${issue.keys.join(', ')}${issue.path.length ? ` in ${issue.path.join('.')}` : ''}`;
    const path = issue.path.map(String).join('.');
    return `${path || where}: ${issue.message}`;
  });
  return `invalid ${where}: ${parts.join('; ')}`;
}
