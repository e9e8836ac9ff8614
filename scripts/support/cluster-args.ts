import { NODE_ACTION_LIMITS, NODE_ACTION_NAMES, nodeActionSchema, type NodeAction } from '../../lib/api/node-actions';
import { PERSISTENCE_MODES } from '../../lib/cluster/persistence';
import { UsageError } from './fatal';

/**
 * `npm run cluster -- …`'s command line, read before anything starts or connects: a request for
 * help prints USAGE, and anything it cannot read is a UsageError whose message is one line.
 */
export const CLUSTER_USAGE = `Usage: npm run cluster -- [command]

  (no command)                 start the local masters and their fault proxies in the foreground; Ctrl-C stops them
  status                       the nodes of a running \`npm start\` (through its control channel)
  <action> <node> [options]    act on node <node> (1, 2, …) of a running \`npm start\`
  help                         this text

Actions: ${NODE_ACTION_NAMES.join(', ')}
Options:
  --persistence <mode>         start, restart: ${PERSISTENCE_MODES.join(' | ')}
  --delay-ms <ms>              restart: wait before starting again (${NODE_ACTION_LIMITS.delayMs.min}–${NODE_ACTION_LIMITS.delayMs.max})
  --latency-ms <ms>            latency (required): added to every reply (${NODE_ACTION_LIMITS.latencyMs.min}–${NODE_ACTION_LIMITS.latencyMs.max})
  --jitter-ms <ms>             latency: random extra up to this (${NODE_ACTION_LIMITS.jitterMs.min}–${NODE_ACTION_LIMITS.jitterMs.max})

Examples: npm run cluster -- crash 2 · npm run cluster -- restart 3 --delay-ms 5000 · npm run cluster -- latency 1 --latency-ms 200`;

export type ClusterCommand = { kind: 'help' } | { kind: 'run' } | { kind: 'status' } | { kind: 'action'; node: number; action: NodeAction };

const HELP = new Set(['help', '--help', '-h']);
/** Option flags and the action field each sets (numbers but for persistence). */
const OPTIONS: Readonly<Record<string, 'persistence' | 'delayMs' | 'latencyMs' | 'jitterMs'>> = {
  '--persistence': 'persistence',
  '--delay-ms': 'delayMs',
  '--latency-ms': 'latencyMs',
  '--jitter-ms': 'jitterMs',
};
const TRY = ' (npm run cluster -- help)';

/** The command `args` (process.argv after the script) asks for; UsageError for anything else. */
export function parseClusterArgs(args: readonly string[]): ClusterCommand {
  const [command, ...rest] = args;
  if (command === undefined) return { kind: 'run' };
  if (HELP.has(command) || rest.some((a) => HELP.has(a))) return { kind: 'help' };
  if (command === 'status') {
    if (rest.length > 0) throw new UsageError(`status takes no arguments, got "${rest.join(' ')}"${TRY}`);
    return { kind: 'status' };
  }
  if (!(NODE_ACTION_NAMES as readonly string[]).includes(command))
    throw new UsageError(`unknown command "${command}": use status, help or an action (${NODE_ACTION_NAMES.join(', ')})${TRY}`);
  const [nodeArg, ...options] = rest;
  if (nodeArg === undefined || !/^[1-9]\d{0,2}$/.test(nodeArg))
    throw new UsageError(`${command} needs a node number (1, 2, …)${nodeArg === undefined ? '' : `, got "${nodeArg}"`}${TRY}`);
  const fields: Record<string, unknown> = { action: command };
  for (let i = 0; i < options.length; i += 2) {
    const flag = options[i]!;
    const field = OPTIONS[flag];
    if (!field) throw new UsageError(`unknown option "${flag}" for ${command}${TRY}`);
    const value = options[i + 1];
    if (value === undefined) throw new UsageError(`${flag} needs a value${TRY}`);
    if (field === 'persistence') fields[field] = value;
    else if (/^\d+$/.test(value)) fields[field] = Number(value);
    else throw new UsageError(`${flag} must be a whole number of milliseconds, got "${value}"${TRY}`);
  }
  const parsed = nodeActionSchema.safeParse(fields);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const flag = Object.keys(OPTIONS).find((f) => OPTIONS[f] === issue.path[0]) ?? String(issue.path[0] ?? command);
    const what =
      issue.code === 'unrecognized_keys'
        ? `${command} takes no ${issue.keys.map((k) => flagOf(k)).join(', ')}`
        : fields[String(issue.path[0])] === undefined
          ? `${command} needs ${flag}`
          : `${flag}: ${issue.message}`;
    throw new UsageError(`${what}${TRY}`);
  }
  return { kind: 'action', node: Number(nodeArg), action: parsed.data };
}

function flagOf(field: string): string {
  return Object.keys(OPTIONS).find((f) => OPTIONS[f] === field) ?? field;
}
