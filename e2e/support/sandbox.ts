import { ControlClient } from '../../lib/cluster/control-client';

function dataDir(): string {
  const dir = process.env.E2E_DATA_DIR;
  if (!dir) throw new Error('E2E_DATA_DIR is not set (run through playwright.config.ts)');
  return dir;
}

/** The supervisor of the console under test's main masters, through the same control channel the console uses. */
export function sandbox(): ControlClient {
  const control = ControlClient.fromDataDir(dataDir());
  if (!control) throw new Error(`no control.json under ${dataDir()}: is the console running?`);
  return control;
}

/** The teaching sandbox's supervisor (the scenarios' own masters), through its control channel. */
export function teachingSandbox(): ControlClient {
  const control = ControlClient.fromDataDir(dataDir(), 'sandbox');
  if (!control) throw new Error(`no scenario-sandbox.json under ${dataDir()}: did npm start start the teaching sandbox?`);
  return control;
}
