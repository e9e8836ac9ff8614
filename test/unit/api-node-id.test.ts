import { describe, expect, it } from 'vitest';
import { nodeIdParamsSchema } from '@/lib/api/nodes';

describe('node ids in paths', () => {
  it('accepts 1–15 written in decimal', () => {
    for (const id of ['1', '2', '9', '10', '15']) expect(nodeIdParamsSchema.parse({ id })).toEqual({ id: Number(id) });
  });

  it('refuses what Number() would take for a number: hex, exponents, spaces, leading zeros, signs, fractions', () => {
    for (const id of ['0x2', '2e0', ' 2', '2 ', '02', '+2', '-1', '1.0', '0', '16', '', 'Infinity', '0b10']) {
      const result = nodeIdParamsSchema.safeParse({ id });
      expect(result.success, id).toBe(false);
      expect(result.error?.issues[0]?.message, id).toMatch(/node ids/);
    }
  });
});
