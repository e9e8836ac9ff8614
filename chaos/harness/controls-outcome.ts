/** The outcome of one negative control or safe twin (chaos/harness/controls.ts). */
import type { NemesisName } from './nemeses';

export interface ControlOutcome {
  name: string;
  /** The nemesis whose situation this control reproduces (null: none). */
  nemesis: NemesisName | null;
  /** What must happen for the control to pass. */
  expectation: string;
  /** True for a negative control (a violation must be found), false for its safe twin. */
  negative: boolean;
  trials: number;
  /** Trials in which the checker found the violation (negative) / found any violation (safe twin). */
  found: number;
  passed: boolean;
  details: string[];
}
