// The lock core's safety paths: grant, fence, quarantine, probe, validity, extend,
// release, cleanup. Stryker mutates these TypeScript files (stryker.config.mjs); the Lua scripts are
// mutated by scripts/mutation/lua-mutants.ts. One list, read by both and by docs/mutation.md's table.
export const SAFETY_TS = [
  'packages/redlock/src/grant.ts', // grant: one node's SET + probe, the vote
  'packages/redlock/src/grant-group.ts', // grant: the batched round, the fast probe transaction
  'packages/redlock/src/grant-plan.ts', // grant/probe: what is sent, the cluster view
  'packages/redlock/src/grant-verdict.ts', // probe/quarantine: a node's answers become its vote
  'packages/redlock/src/quarantine-start.ts', // quarantine
  'packages/redlock/src/reseed.ts', // fence: the register reseed after a quarantine
  'packages/redlock/src/fence-round.ts', // fence
  'packages/redlock/src/fence-group.ts', // fence
  'packages/redlock/src/fence-ahead.ts', // fence: a fence proposed with the grant
  'packages/redlock/src/quorum.ts', // validity
  'packages/redlock/src/release-round.ts', // release, cleanup
  'packages/redlock/src/release-group.ts', // release, cleanup
  'packages/redlock/src/lock.ts', // extend, validity
  'packages/redlock/src/clock-check.ts', // probe/validity: a node's clock held to the drift the validity allows
];
