/**
 * `npm run cluster`: only the local masters and their fault proxies, no console. Useful to point
 * your own code (or `npm run bench`) at the same five masters `npm start` would run.
 *
 *   npm run cluster                      start them in the foreground; Ctrl-C stops them
 *   npm run cluster -- status            nodes of a running `npm start` (via its control channel)
 *   npm run cluster -- <action> <node>   crash | stop | start | restart | pause | resume | partition | heal …
 *   npm run cluster -- help              the usage (support/cluster-args.ts); a bad argument: one line, exit 2
 */
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NodeActionError } from '../lib/cluster/errors';
import { CLUSTER_USAGE, parseClusterArgs } from './support/cluster-args';
import { describeFatal, UsageError } from './support/fatal';

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));

async function main(): Promise<void> {
  // The command line first: help and mistakes answer before anything is read or started.
  const command = parseClusterArgs(process.argv.slice(2));
  if (command.kind === 'help') {
    console.log(CLUSTER_USAGE);
    return;
  }
  // Loaded once the command line is read: help and mistakes answer at once.
  const [{ ClusterSupervisor, continuityLines, ControlClient }, { loadConfig, redact }, { installProcessGuards }, packages] =
    await Promise.all([
      import('../lib/cluster'),
      import('../lib/config'),
      import('./support/process-guards'),
      import('./support/system-packages'),
    ]);
  const config = loadConfig(process.env, root);
  if (command.kind !== 'run') {
    const control = ControlClient.fromDataDir(config.dataDir);
    if (!control) throw new UsageError(`no running console found under ${config.dataDir} (start one with npm start)`);
    if (command.kind === 'status') {
      console.table(
        (await control.nodes()).map((n) => ({
          id: n.id,
          state: n.state,
          url: redact(n.url),
          persistence: n.persistence,
          fault: n.fault?.kind ?? '—',
        })),
      );
      return;
    }
    const node = await control.act(command.node, command.action);
    console.log(`node ${node.id}: ${node.state}${node.fault ? ` (network ${node.fault.kind})` : ''}`);
    return;
  }
  const supervisor = await ClusterSupervisor.start({
    dataRoot: join(config.dataDir, 'cluster'),
    nodes: config.clusterSize,
    portBase: config.serverPortBase,
    proxyPortBase: config.portBase,
    persistence: config.persistence,
    binary: packages.ensureSystemPackage(packages.REDIS_SERVER),
    keyPrefix: config.keyPrefix,
    maxTtlMs: config.maxTtlMs,
  });
  console.log(
    `${supervisor.size} masters up (password in ${join(config.dataDir, 'cluster', 'redis.secret')}): ${supervisor.urls().map(redact).join(',')}`,
  );
  for (const line of continuityLines(supervisor.nodes())) console.log(line);
  console.log('Ctrl-C stops them.');
  installProcessGuards({ shutdown: () => supervisor.shutdown(), killSync: () => supervisor.killAllSync() });
}

main().catch((err: unknown) => {
  console.error(describeFatal(err));
  process.exit(err instanceof UsageError || err instanceof NodeActionError ? 2 : 1);
});
