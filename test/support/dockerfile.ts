import { readFileSync } from 'node:fs';

/** One instruction of a Dockerfile: its keyword and the rest of its (joined) line. */
export interface Instruction {
  readonly op: string;
  readonly args: string;
}
export interface Stage {
  readonly name: string | null;
  readonly from: string;
  readonly instructions: readonly Instruction[];
}

/**
 * The stages of a Dockerfile (no Docker engine runs here: the file is read for what it promises).
 * Continuation lines are joined, comments dropped, and `${ARG}` in FROM resolved from the ARGs
 * declared before the first stage.
 */
export function readDockerfile(path = 'Dockerfile'): Stage[] {
  const lines = readFileSync(path, 'utf8')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const args = new Map<string, string>();
  const stages: Array<{ name: string | null; from: string; instructions: Instruction[] }> = [];
  for (const line of lines) {
    const [, op = '', rest = ''] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    const upper = op.toUpperCase();
    if (upper === 'ARG' && stages.length === 0) {
      const [k = '', v = ''] = rest.split('=');
      args.set(k, v);
    } else if (upper === 'FROM') {
      const [image = '', , name = null] = rest.replace(/\$\{(\w+)\}/g, (_, k: string) => args.get(k) ?? '').split(/\s+/);
      stages.push({ name, from: image, instructions: [] });
    } else {
      stages.at(-1)?.instructions.push({ op: upper, args: rest });
    }
  }
  return stages;
}

/** A stage's `COPY [--flag…] src… dest` lines from stage `from`: what the image holds from it. */
export function copiesFrom(stage: Stage, from: string): Array<{ sources: string[]; dest: string }> {
  return stage.instructions
    .filter((i) => i.op === 'COPY')
    .map((i) => {
      const words = i.args.split(/\s+/);
      const flags = words.filter((w) => w.startsWith('--'));
      const paths = words.filter((w) => !w.startsWith('--'));
      return {
        from: flags.find((f) => f.startsWith('--from='))?.slice('--from='.length),
        sources: paths.slice(0, -1),
        dest: paths.at(-1)!,
      };
    })
    .filter((c) => c.from === from)
    .map(({ sources, dest }) => ({ sources, dest }));
}
