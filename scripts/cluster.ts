/**
 * `npm run cluster`: only the local masters and their fault proxies, no console. Useful to point
 * your own code (or `npm run bench`) at the same five masters `npm start` would run.
 *
 *   npm run cluster                      start them in the foreground; Ctrl-C stops them
 *   npm run cluster -- status            nodes of a running `npm start` (via its control channel)
 *   npm run cluster -- <action> <node>   crash | stop | start | restart | pause | resume | partition | heal
 */
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodeActionSchema } from '../lib/api/node-actions';
import { ClusterSupervisor, continuityLines, ControlClient } from '../lib/cluster';
import { loadConfig, redact } from '../lib/config';
import { describeFatal } from './support/fatal';
import { installProcessGuards } from './support/process-guards';
import { ensureSystemPackage, REDIS_SERVER } from './support/system-packages';

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));

async function main(): Promise<void> {
  const config = loadConfig(process.env, root);
  const [command, nodeArg] = process.argv.slice(2);
  if (command) {
    const control = ControlClient.fromDataDir(config.dataDir);
    if (!control) throw new Error(`no running console found under ${config.dataDir} (start one with npm start)`);
    if (command === 'status') {
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
    const action = nodeActionSchema.parse({ action: command });
    const node = await control.act(Number(nodeArg), action);
    console.log(`node ${node.id}: ${node.state}${node.fault ? ` (network ${node.fault.kind})` : ''}`);
    return;
  }
  const supervisor = await ClusterSupervisor.start({
    dataRoot: join(config.dataDir, 'cluster'),
    nodes: config.clusterSize,
    portBase: config.serverPortBase,
    proxyPortBase: config.portBase,
    persistence: config.persistence,
    binary: ensureSystemPackage(REDIS_SERVER),
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
  process.exit(1);
});
