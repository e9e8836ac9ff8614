import { describe, expect, it } from 'vitest';
import { clientView } from '@/lib/scenarios/view';

describe('scenario clients as the run view shows them', () => {
  it('a client with a safety check switched off is marked unsafe and says which one', () => {
    expect(clientView({ name: 'A', description: 'the default' })).toEqual({
      name: 'A',
      description: 'the default',
      unsafe: false,
      unsafeSetting: null,
    });
    expect(clientView({ name: 'B', description: 'd', quarantine: false })).toMatchObject({ unsafe: true, unsafeSetting: 'quarantine off' });
    expect(clientView({ name: 'C', description: 'd', nodeChecks: false })).toMatchObject({
      unsafe: true,
      unsafeSetting: 'node checks off',
    });
    expect(clientView({ name: 'D', description: 'd', quarantine: true, nodeChecks: true })).toMatchObject({
      unsafe: false,
      unsafeSetting: null,
    });
  });
});
