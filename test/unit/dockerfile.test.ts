import { describe, expect, it } from 'vitest';
import { copiesFrom, readDockerfile } from '../support/dockerfile';

// No Docker engine runs here: the file is checked for what the image promises, and
// test/integration/server-bundle.test.ts assembles and runs the very files its final stage copies
// (scripts/support/image-files.ts owns that list).
const stages = readDockerfile();
const final = stages.at(-1)!;
const ops = (op: string) => final.instructions.filter((i) => i.op === op).map((i) => i.args);

describe('Dockerfile', () => {
  it('builds on the Active LTS Node line (26), never an end-of-life one', () => {
    for (const stage of stages) expect(stage.from).toMatch(/^node:26-[a-z]+-slim$/);
  });

  it('the final stage copies only the assembled image: no install, no sources, no second COPY', () => {
    expect(ops('COPY')).toHaveLength(1);
    expect(copiesFrom(final, 'build')).toEqual([{ sources: ['/image'], dest: './' }]);
    expect(ops('RUN').join(' ')).not.toMatch(/npm|npx|tsx/);
    const build = stages.find((s) => s.name === 'build')!;
    expect(build.instructions.find((i) => i.op === 'RUN' && i.args.includes('scripts/build.ts'))?.args).toContain(
      'scripts/assemble-image.ts /image',
    );
  });

  it('runs the bundled JavaScript with plain node (no tsx, no loader)', () => {
    expect(JSON.parse(ops('CMD')[0]!)).toEqual(['node', 'dist/server/start.mjs']);
  });

  it('runs as the unprivileged node user, with its state under /data (a read-only root filesystem works)', () => {
    expect(ops('USER').at(-1)).toBe('node');
    expect(ops('ENV').join(' ')).toContain('REDLOCK_DATA_DIR=/data');
    expect(ops('VOLUME')).toEqual(['/data']);
    expect(ops('RUN').join(' ')).toContain('chown node:node /data');
  });

  it('is healthy while the console answers (liveness, on the configured port), with a start period', () => {
    const check = ops('HEALTHCHECK')[0]!;
    expect(check).toContain('/api/health');
    expect(check).not.toContain('/api/ready'); // a lost quorum must not get the console restarted
    expect(check).toContain('process.env.PORT');
    expect(check).toMatch(/--start-period=\d+s/);
  });
});
