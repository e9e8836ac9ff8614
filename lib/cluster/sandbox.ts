import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CONTROL_FILES, SANDBOX_CONTROL_ENV } from './control-protocol';
import { startControlServer, type ControlServer } from './control-server';
import { ensureSecretFile } from './secret';
import { ClusterSupervisor } from './supervisor';

/** The scenarios are written for five masters. */
export const SANDBOX_NODES = 5;

export interface ScenarioSandbox {
  supervisor: ClusterSupervisor;
  control: ControlServer;
  /** What the console server needs to reach it (SANDBOX_CONTROL_ENV). */
  env: Record<string, string>;
  /** Stop the control channel and the masters, and forget the channel's file. */
  close(): Promise<void>;
}

/**
 * The teaching sandbox: five masters started for the scenarios alone, with their own ports, fault
 * proxies, data directories (`<dataDir>/scenario-sandbox/node-*`), password and control channel.
 * The scenarios crash, pause, slow and roll back these, never the masters that hold applications'
 * locks: the console hands a run this channel only (lib/server/scenario-sandbox.ts), and the run
 * refuses masters that are also the console's (lib/scenarios/separation.ts).
 *
 * Started with the console rather than at the first run: five idle redis-servers cost about 20 MB
 * and no measurable CPU (README, "The teaching sandbox"), while a start on demand would make the
 * first run wait for five nodes and add a start/stop protocol to the control channel.
 */
export async function startScenarioSandbox(options: {
  dataDir: string;
  /** Path of redis-server; found on PATH when omitted. */
  binary?: string;
  keyPrefix: string;
  maxTtlMs: number;
  /** First proxy port; the redis-servers listen 5 above. Omitted: any free ports. */
  portBase?: number | null;
  lifeline?: boolean;
}): Promise<ScenarioSandbox> {
  const base = options.portBase ?? undefined;
  const supervisor = await ClusterSupervisor.start({
    dataRoot: join(options.dataDir, 'scenario-sandbox'),
    nodes: SANDBOX_NODES,
    ...(base !== undefined ? { proxyPortBase: base, portBase: base + SANDBOX_NODES } : {}),
    // What every scenario expects to find and to leave behind (scenario 4 measures it, 9 changes it and puts it back).
    persistence: 'aof-always',
    ...(options.binary === undefined ? {} : { binary: options.binary }),
    keyPrefix: options.keyPrefix,
    maxTtlMs: options.maxTtlMs,
    ...(options.lifeline === undefined ? {} : { lifeline: options.lifeline }),
  });
  let control: ControlServer;
  const secretFile = join(options.dataDir, 'scenario-sandbox.secret');
  const file = join(options.dataDir, CONTROL_FILES.sandbox);
  try {
    control = await startControlServer(supervisor, ensureSecretFile(secretFile));
    writeFileSync(file, JSON.stringify({ url: control.url, secretFile, pid: process.pid }), { mode: 0o600 });
  } catch (err) {
    await supervisor.shutdown();
    throw err;
  }
  return {
    supervisor,
    control,
    env: { [SANDBOX_CONTROL_ENV.url]: control.url, [SANDBOX_CONTROL_ENV.secretFile]: secretFile },
    async close() {
      await control.close().catch(() => undefined);
      rmSync(file, { force: true });
      await supervisor.shutdown().catch(() => undefined);
    },
  };
}
