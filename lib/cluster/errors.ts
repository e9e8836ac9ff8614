/**
 * A configuration or environment problem the operator must fix. `message` is one line that says
 * what is wrong and how to fix it; entry points print it without a stack trace.
 */
export class ClusterConfigError extends Error {
  override readonly name = 'ClusterConfigError' as const;
  constructor(
    message: string,
    readonly code: 'REDIS_MISSING' | 'PORT_IN_USE' | 'BAD_CONFIG' | 'START_FAILED',
  ) {
    super(message);
  }
}

export type NodeActionErrorCode = 'NOT_FOUND' | 'BAD_STATE' | 'BAD_ACTION' | 'NO_PROXY';

/** An action that does not fit the node's current state (e.g. resume a node that is not paused). */
export class NodeActionError extends Error {
  override readonly name = 'NodeActionError' as const;
  constructor(
    message: string,
    readonly code: NodeActionErrorCode,
  ) {
    super(message);
  }
}

/** The HTTP status of each NodeActionError code: the control channel and the console's API answer alike. */
export const NODE_ACTION_STATUS: Readonly<Record<NodeActionErrorCode, number>> = Object.freeze({
  NOT_FOUND: 404,
  BAD_ACTION: 400,
  BAD_STATE: 409,
  NO_PROXY: 409,
});

/** A NodeActionError as an HTTP answer: the one mapping the control channel and the console's API both send. */
export function nodeActionAnswer(err: NodeActionError): {
  status: number;
  body: { error: { code: NodeActionErrorCode; message: string } };
} {
  return { status: NODE_ACTION_STATUS[err.code] ?? 409, body: { error: { code: err.code, message: err.message } } };
}
