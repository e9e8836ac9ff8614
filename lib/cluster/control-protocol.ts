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

export interface ControlErrorBody {
  error: { code: string; message: string };
}
