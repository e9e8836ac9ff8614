import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { copiesFrom, readDockerfile } from '../support/dockerfile';

// No Docker engine runs here: the file is checked for what the image promises (issue 22), and
// test/integration/server-bundle.test.ts runs the very files its final stage copies.
const stages = readDockerfile();
const final = stages.at(-1)!;
const ops = (op: string) => final.instructions.filter((i) => i.op === op).map((i) => i.args);
const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { devDependencies: Record<string, string> };

describe('Dockerfile', () => {
  it('builds on the Active LTS Node line (26), never an end-of-life one', () => {
    for (const stage of stages) expect(stage.from).toMatch(/^node:26-[a-z]+-slim$/);
  });

  it('the final stage installs nothing and gets node_modules from a production-only install', () => {
    expect(ops('RUN').join(' ')).not.toMatch(/npm (ci|install|i)\b/);
    const modules = final.instructions.filter((i) => i.op === 'COPY' && / node_modules$/.test(i.args));
    expect(modules).toHaveLength(1);
    const from = /^--from=(\S+) /.exec(modules[0]!.args)![1];
    const deps = stages.find((s) => s.name === from)!;
    const install = deps.instructions.filter((i) => i.op === 'RUN' && /npm ci/.test(i.args));
    expect(install).toHaveLength(1);
    expect(install[0]!.args).toContain('--omit=dev');
    // Nothing else that holds devDependencies reaches the image.
    for (const copy of copiesFrom(final, 'build')) expect(copy.sources.some((s) => s.includes('node_modules'))).toBe(false);
    expect(Object.keys(pkg.devDependencies)).toContain('@playwright/test'); // (what must stay out)
  });

  it('runs the bundled JavaScript with plain node: no tsx, no TypeScript sources, no test or bench files', () => {
    const cmd = JSON.parse(ops('CMD')[0]!) as string[];
    expect(cmd).toEqual(['node', 'dist/server/start.mjs']);
    const sources = copiesFrom(final, 'build').flatMap((c) => c.sources.map((s) => s.replace(/^\/app\//, '')));
    for (const dir of ['app', 'components', 'lib', 'scripts', 'test', 'e2e', 'bench', 'packages/redlock/src'])
      expect(sources).not.toContain(dir);
    // The one TypeScript file: next.config.ts and the headers module it imports (Next.js reads them at start).
    expect(sources.filter((s) => s.endsWith('.ts')).sort()).toEqual(['lib/server/http/security-headers.ts', 'next.config.ts']);
    // The build stage removed its caches before the image copies .next.
    const build = stages.find((s) => s.name === 'build')!;
    expect(build.instructions.find((i) => i.op === 'RUN' && i.args.includes('scripts/build.ts'))?.args).toMatch(/rm -rf .*\.next\/cache/);
  });

  it('runs as the unprivileged node user, with its state under /data (a read-only root filesystem works)', () => {
    const users = ops('USER');
    expect(users.at(-1)).toBe('node');
    expect(ops('ENV').join(' ')).toContain('REDLOCK_DATA_DIR=/data');
    expect(ops('VOLUME')).toEqual(['/data']);
    expect(ops('RUN').join(' ')).toContain('chown node:node /data');
  });

  it('is healthy only when ready (a quorum of masters can grant), with a start period', () => {
    const check = ops('HEALTHCHECK')[0]!;
    expect(check).toContain('http://127.0.0.1:3000/api/ready');
    expect(check).toMatch(/--start-period=\d+s/);
  });
});
