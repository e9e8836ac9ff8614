/**
 * The end of a switch over a closed union (node actions, fault modes, quarantine causes, vote
 * reasons…): `default: return exhaustive(x, 'what')`. A member added to the union and not
 * handled fails to compile here (`x` is no longer `never`), so the compiler names every switch to
 * change; a value that still arrives at run time (data from outside the types) throws, naming it.
 */
export function exhaustive(value: never, what: string): never {
  throw new Error(`unhandled ${what}: ${JSON.stringify(value)}`);
}
