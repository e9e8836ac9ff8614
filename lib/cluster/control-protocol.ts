/**
 * The local control channel between the supervisor (in the `npm start` process) and the console
 * server (the Next.js process it spawns). HTTP on 127.0.0.1 with a bearer secret kept in a 0600
 * file under the data directory: only processes that can read that file can act on the nodes.
 *
 *   GET  /v1/nodes                → 200 { nodes: NodeStatus[] }
 *   POST /v1/nodes/:id/actions    → 200 { node: NodeStatus }   body: NodeAction
 *   errors                        → 4xx { error: { code, message } }
 */
export const CONTROL_ENV = Object.freeze({
  url: 'REDLOCK_CONTROL_URL',
  secretFile: 'REDLOCK_CONTROL_SECRET_FILE',
});

/**
 * The teaching sandbox's control channel (lib/cluster/sandbox.ts): the same protocol, served by a
 * second supervisor over masters of its own. Only the scenarios use it; the main channel above is
 * never handed to a scenario run.
 */
export const SANDBOX_CONTROL_ENV = Object.freeze({
  url: 'REDLOCK_SANDBOX_CONTROL_URL',
  secretFile: 'REDLOCK_SANDBOX_CONTROL_SECRET_FILE',
});

/** The files under the data directory where a running `npm start` names its control channels. */
export const CONTROL_FILES = Object.freeze({ main: 'control.json', sandbox: 'scenario-sandbox.json' });

export interface ControlErrorBody {
  error: { code: string; message: string };
}
