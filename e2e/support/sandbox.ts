import { ControlClient } from '../../lib/cluster/control-client';

/** The supervisor of the console under test, through the same control channel the console uses. */
export function sandbox(): ControlClient {
  const dir = process.env.E2E_DATA_DIR;
  if (!dir) throw new Error('E2E_DATA_DIR is not set (run through playwright.config.ts)');
  const control = ControlClient.fromDataDir(dir);
  if (!control) throw new Error(`no control.json under ${dir}: is the console running?`);
  return control;
}
