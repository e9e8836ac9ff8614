import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { NodeAction } from '../api/node-actions';
import { CONTROL_ENV, CONTROL_FILES, SANDBOX_CONTROL_ENV, type ControlErrorBody } from './control-protocol';
import { NodeActionError } from './errors';
import type { NodeStatus } from './supervisor';

/** The console server's handle on the supervisor, over the local control channel. */
export class ControlClient {
  constructor(
    private readonly url: string,
    private readonly secret: string,
    private readonly timeoutMs = 30_000,
  ) {}

  /** From REDLOCK_CONTROL_URL and REDLOCK_CONTROL_SECRET_FILE; null when the console does not run the cluster. */
  static fromEnv(
    env: Record<string, string | undefined> = process.env,
    names: { url: string; secretFile: string } = CONTROL_ENV,
  ): ControlClient | null {
    const url = env[names.url];
    const file = env[names.secretFile];
    if (!url || !file) return null;
    return new ControlClient(url, readFileSync(file, 'utf8').trim());
  }

  /** The teaching sandbox's channel, from REDLOCK_SANDBOX_CONTROL_URL and …_SECRET_FILE; null when no sandbox runs. */
  static sandboxFromEnv(env: Record<string, string | undefined> = process.env): ControlClient | null {
    return ControlClient.fromEnv(env, SANDBOX_CONTROL_ENV);
  }

  /**
   * From `<dataDir>/control.json` (the main masters) or `<dataDir>/scenario-sandbox.json` (the
   * teaching sandbox), written by a running `npm start`; null when none runs.
   */
  static fromDataDir(dataDir: string, which: keyof typeof CONTROL_FILES = 'main'): ControlClient | null {
    try {
      const { url, secretFile } = JSON.parse(readFileSync(join(dataDir, CONTROL_FILES[which]), 'utf8')) as {
        url: string;
        secretFile: string;
      };
      return new ControlClient(url, readFileSync(secretFile, 'utf8').trim());
    } catch {
      return null;
    }
  }

  async nodes(): Promise<NodeStatus[]> {
    const body = await this.request<{ nodes: NodeStatus[] }>('GET', '/v1/nodes');
    return body.nodes;
  }

  async act(id: number, action: NodeAction): Promise<NodeStatus> {
    const body = await this.request<{ node: NodeStatus }>('POST', `/v1/nodes/${id}/actions`, action);
    return body.node;
  }

  private async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await fetch(`${this.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${this.secret}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    const json = (await res.json()) as T | ControlErrorBody;
    if (!res.ok) {
      const { code, message } = (json as ControlErrorBody).error;
      const known = ['NOT_FOUND', 'BAD_STATE', 'BAD_ACTION', 'NO_PROXY'] as const;
      throw new NodeActionError(message, (known as readonly string[]).includes(code) ? (code as (typeof known)[number]) : 'BAD_ACTION');
    }
    return json as T;
  }
}
