/**
 * A child process for the leak tests: starts a supervisor with the same process guards as the
 * entry points, prints {pids, watchdog} as one JSON line, then waits. CHILD_FAULT=throw makes it
 * throw an uncaught error after it has printed.
 */
import { ClusterSupervisor } from '../../lib/cluster';
import { installProcessGuards } from '../../scripts/support/process-guards';

const dataRoot = process.argv[2];
if (!dataRoot) throw new Error('usage: supervisor-child <dataRoot>');
const supervisor = await ClusterSupervisor.start({ dataRoot, nodes: 2, persistence: 'none' });
installProcessGuards({ shutdown: () => supervisor.shutdown(), killSync: () => supervisor.killAllSync() }, () => undefined);
const watchdog = (supervisor as unknown as { lifeline: { pid: number | null } }).lifeline.pid;
process.stdout.write(`${JSON.stringify({ pids: supervisor.nodes().map((n) => n.pid), watchdog })}\n`);
if (process.env.CHILD_FAULT === 'throw') {
  setTimeout(() => {
    throw new Error('deliberate uncaught error');
  }, 50);
}
setInterval(() => undefined, 1_000);
