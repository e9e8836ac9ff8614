/**
 * Node numbering, converted in one place: node n is the n-th entry of a list in node order,
 * counted from 1 in every layer (votes, events, the API, the UI, the supervisor's ids;
 * docs/architecture.md). Lists are arrays indexed from 0.
 */

/** The entry for node `n` of a list in node order (undefined when there is no such node). */
export function atNode<T>(list: readonly T[], n: number): T | undefined {
  return list[n - 1];
}

/** The node number of the entry at `index` of a list in node order. */
export function nodeNumber(index: number): number {
  return index + 1;
}
