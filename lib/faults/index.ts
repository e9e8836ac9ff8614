export {
  FaultProxy,
  DEFAULT_MAX_BUFFER_BYTES,
  type FaultProxyOptions,
  type FaultProxyStats,
  type FaultProxyEvents,
  type FaultConnectionErrorInfo,
} from './proxy';
export {
  parseFaultMode,
  formatFaultMode,
  sameFaultMode,
  FaultModeError,
  FAULT_MODE_KINDS,
  MAX_FAULT_DELAY_MS,
  type FaultMode,
  type FaultModeKind,
} from './modes';
export type { ConnectionSide, FlowDirection } from './connection';
