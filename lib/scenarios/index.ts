/** Teaching scenarios: a typed script of steps run against the sandbox cluster with real Redlock clients. */
export { SCENARIOS, scenarioById } from './catalog';
export { ScenarioRun, type RunOptions } from './engine';
export type { ClusterControl } from './cluster';
export type { ScenarioDefinition, ScenarioScript, Step } from './script';
export { createPrng, randomSeed, type Prng } from './prng';
export { checkMutualExclusion, type Belief, type CheckerResult, type OverlapFinding } from './checker';
export { FencedRegister, PlainRegister, type WriteAttempt, type WriteOutcome } from './registers';
export { assembleKeySegments, assembleStateSegments, type KeySegment, type NodeSample } from './timeline';
