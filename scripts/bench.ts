/**
 * `npm run bench`: the lock core and the scanner against their peers, on five local masters, in
 * one run (not part of npm test). Writes bench/results.json and prints the table.
 *
 *   npm run bench                              every workload, 5 runs each (the committed result)
 *   npm run bench -- --quick                   3 shorter runs, for development (bench/tmp/results.json)
 *   npm run bench -- --only throughput,latency  some workloads (bench/tmp/results.json)
 *   npm run bench -- --markdown                print the tables as Markdown (for docs/benchmarks.md)
 *   npm run bench -- --report [--markdown]     print bench/results.json again, without running anything
 *
 * Workloads: throughput, latency, handoff, degraded, memory, scanner. See bench/README.md.
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { renderMarkdown, renderText, type BenchResults } from '../bench/harness/report';
import { activeCluster, RESULTS_FILE, runBench, WORKLOADS } from '../bench/run';
import { describeFatal } from './support/fatal';

function parseArgs(argv: readonly string[]): { quick: boolean; only: string[] | null; markdown: boolean; report: boolean } {
  let quick = false;
  let markdown = false;
  let report = false;
  let only: string[] | null = null;
  const ids = WORKLOADS.map((w) => w.id);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--quick') quick = true;
    else if (arg === '--markdown') markdown = true;
    else if (arg === '--report') report = true;
    else if (arg === '--only' || arg.startsWith('--only=')) {
      const value = arg === '--only' ? argv[++i] : arg.slice('--only='.length);
      only = (value ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      const unknown = only.filter((id) => !ids.includes(id));
      if (only.length === 0 || unknown.length > 0) throw new Error(`--only takes workloads among ${ids.join(', ')}; got "${value ?? ''}"`);
    } else if (arg === '--help' || arg === '-h') {
      console.log('usage: npm run bench -- [--quick] [--only <workload>[,<workload>…]] [--markdown] | --report [--markdown]');
      console.log(`workloads: ${ids.join(', ')}`);
      process.exit(0);
    } else {
      throw new Error(`unknown option ${arg} (try --help)`);
    }
  }
  return { quick, only, markdown, report };
}

// Whatever happens, paused nodes get SIGCONT and the masters stop (the supervisor's lifeline
// covers a SIGKILL of this process).
let stopping = false;
const stop = (code: number) => {
  if (stopping) {
    activeCluster?.killSync();
    process.exit(code);
  }
  stopping = true;
  console.error('stopping…');
  const cluster = activeCluster;
  void (cluster ? cluster.stop() : Promise.resolve()).catch(() => cluster?.killSync()).finally(() => process.exit(code));
};
process.on('SIGINT', () => stop(130));
process.on('SIGTERM', () => stop(143));
process.on('uncaughtException', (err) => {
  console.error(describeFatal(err));
  activeCluster?.killSync();
  process.exit(1);
});

// A peer that misbehaves under a stopped node must not end the run: report, do not exit.
process.on('unhandledRejection', (reason) => console.error(`unhandled rejection (ignored): ${describeFatal(reason)}`));

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  if (args.report) {
    const results = JSON.parse(readFileSync(RESULTS_FILE, 'utf8')) as BenchResults;
    console.log(args.markdown ? renderMarkdown(results) : renderText(results));
    return;
  }
  const log = (line: string) => console.error(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}`);
  const { text, file } = await runBench({ quick: args.quick, only: args.only, markdown: args.markdown, log });
  console.log(text);
  console.log(`\nwrote ${relative(process.cwd(), file)}`);
  // Peers' calls that never returned (a stopped node) may still hold sockets: do not wait for them.
  process.exit(0);
}

main().catch((err: unknown) => {
  console.error(describeFatal(err));
  activeCluster?.killSync();
  process.exit(1);
});
